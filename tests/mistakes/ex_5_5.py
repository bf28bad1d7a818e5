"""Exercise 5.5, reviews_needed: the fewest reviews whose Wilson interval is as narrow as asked."""

EXERCISE = "5.5"

_HEAD = '''
from helpers.significance import wilson_half_width


def reviews_needed(accuracy, half_width, z=1.96):
'''

MISTAKES = {
    "the Wald formula z²p(1-p)/h², rounded up": '''
import math


def reviews_needed(accuracy, half_width, z=1.96):
    return math.ceil(z**2 * accuracy * (1 - accuracy) / half_width**2)''',
    "the last n that is too few (off by one)": _HEAD + '''
    n = 1
    while wilson_half_width(accuracy, n, z) > half_width:
        n += 1
    return n - 1''',
    "the whole width compared with half_width": _HEAD + '''
    n = 1
    while 2 * wilson_half_width(accuracy, n, z) > half_width:
        n += 1
    return n''',
    "z left at 1.96 inside the search": _HEAD + '''
    n = 1
    while wilson_half_width(accuracy, n) > half_width:
        n += 1
    return n''',
    "a search in steps of 10 (not the smallest n)": _HEAD + '''
    n = 10
    while wilson_half_width(accuracy, n, z) > half_width:
        n += 10
    return n''',
}
