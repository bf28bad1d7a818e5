"""Exercise 9.2, DeleteWord.corrupt: delete one random token."""

EXERCISE = "9.2"

_HEAD = '''
class DeleteWord:
    name = "delete one word"

    def corrupt(self, tokens, rng):
'''

MISTAKES = {
    "always the first word": _HEAD + '''
        if len(tokens) < 2:
            return None
        return tokens[1:]''',
    "never the last word (integers(len - 1))": _HEAD + '''
        if len(tokens) < 2:
            return None
        i = rng.integers(len(tokens) - 1)
        return tokens[:i] + tokens[i + 1:]''',
    "Python's random module instead of the generator given": _HEAD + '''
        import random

        if len(tokens) < 2:
            return None
        i = random.randrange(len(tokens))
        return tokens[:i] + tokens[i + 1:]''',
    "the caller's list changed in place": _HEAD + '''
        if len(tokens) < 2:
            return None
        del tokens[rng.integers(len(tokens))]
        return tokens''',
    "a one-word sentence becomes an empty one": _HEAD + '''
        i = rng.integers(len(tokens))
        return tokens[:i] + tokens[i + 1:]''',
}
