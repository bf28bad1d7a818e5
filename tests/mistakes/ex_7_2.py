"""Exercise 7.2, my_lexical_difference: the share of target word types unseen in the source."""

EXERCISE = "7.2"

_HEAD = '''
def my_lexical_difference(source_vocabulary, target_vocabulary):
'''

MISTAKES = {
    "the direction swapped (source types unseen in the target)": _HEAD + '''
    return 1 - len(target_vocabulary & source_vocabulary) / len(source_vocabulary)''',
    "one minus the Jaccard index": _HEAD + '''
    return 1 - len(target_vocabulary & source_vocabulary) / len(target_vocabulary | source_vocabulary)''',
    "the shared share (1 - forgotten)": _HEAD + '''
    return len(target_vocabulary & source_vocabulary) / len(target_vocabulary)''',
}
