"""Exercise 7.2, my_lexical_difference (the share of target word types unseen in the source)
and my_oov_rate (the share of target word tokens unseen in the source)."""

EXERCISE = "7.2"

_LEXICAL = '''
def my_lexical_difference(source_vocabulary, target_vocabulary):
'''

_CORRECT_LEXICAL = _LEXICAL + '''
    return 1 - len(target_vocabulary & source_vocabulary) / len(target_vocabulary)
'''

_OOV = '''

def my_oov_rate(source_vocabulary, target_tokens):
'''

_CORRECT_OOV = _OOV + '''
    return sum(token not in source_vocabulary for token in target_tokens) / len(target_tokens)'''

MISTAKES = {
    "the direction swapped (source types unseen in the target)": _LEXICAL + '''
    return 1 - len(target_vocabulary & source_vocabulary) / len(source_vocabulary)''' + _CORRECT_OOV,
    "one minus the Jaccard index": _LEXICAL + '''
    return 1 - len(target_vocabulary & source_vocabulary) / len(target_vocabulary | source_vocabulary)'''
    + _CORRECT_OOV,
    "the shared share (1 - forgotten)": _LEXICAL + '''
    return len(target_vocabulary & source_vocabulary) / len(target_vocabulary)''' + _CORRECT_OOV,
    "the OOV rate over types, not tokens (the lexical difference again)": _CORRECT_LEXICAL + _OOV + '''
    types = set(target_tokens)
    return 1 - len(types & source_vocabulary) / len(types)''',
    "unseen types over all tokens": _CORRECT_LEXICAL + _OOV + '''
    return len(set(target_tokens) - source_vocabulary) / len(target_tokens)''',
    "the share of tokens seen (1 - OOV rate)": _CORRECT_LEXICAL + _OOV + '''
    return sum(token in source_vocabulary for token in target_tokens) / len(target_tokens)''',
    "unseen tokens over the source vocabulary's size": _CORRECT_LEXICAL + _OOV + '''
    return sum(token not in source_vocabulary for token in target_tokens) / len(source_vocabulary)''',
}
