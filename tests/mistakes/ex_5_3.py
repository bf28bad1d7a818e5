"""Exercise 5.3, mark_negated: _NEG on every token from a negation word to the clause's end."""

EXERCISE = "5.3"

_LOOP = '''
def mark_negated(tokens):
    marked, in_scope = [], False
    for token in tokens:
'''

MISTAKES = {
    "a comma ends the scope too": _LOOP + '''
        if in_scope and token in CLAUSE_END | {","}:
            in_scope = False
            marked.append(token)
        elif in_scope:
            marked.append(token + "_NEG")
        else:
            in_scope = token in NEGATION_WORDS or "n't" in token
            marked.append(token)
    return marked''',
    "the negation word marked too": _LOOP + '''
        if in_scope and token in CLAUSE_END:
            in_scope = False
            marked.append(token)
        elif in_scope or token in NEGATION_WORDS or "n't" in token:
            in_scope = True
            marked.append(token + "_NEG")
        else:
            marked.append(token)
    return marked''',
    "the scope runs to the end of the review": _LOOP + '''
        if in_scope:
            marked.append(token + "_NEG")
        else:
            in_scope = token in NEGATION_WORDS or "n't" in token
            marked.append(token)
    return marked''',
    "only the next token marked": _LOOP + '''
        marked.append(token + "_NEG" if in_scope and token not in CLAUSE_END else token)
        in_scope = token in NEGATION_WORDS or "n't" in token
    return marked''',
    "the clause-ending token marked": _LOOP + '''
        if in_scope:
            marked.append(token + "_NEG")
            in_scope = token not in CLAUSE_END
        else:
            in_scope = token in NEGATION_WORDS or "n't" in token
            marked.append(token)
    return marked''',
    "contractions (n't) not taken as negations": _LOOP + '''
        if in_scope and token in CLAUSE_END:
            in_scope = False
            marked.append(token)
        elif in_scope:
            marked.append(token + "_NEG")
        else:
            in_scope = token in NEGATION_WORDS
            marked.append(token)
    return marked''',
    "a second negation ends the scope (double negation flips it)": _LOOP + '''
        if in_scope and (token in CLAUSE_END or token in NEGATION_WORDS or "n't" in token):
            in_scope = False
            marked.append(token)
        elif in_scope:
            marked.append(token + "_NEG")
        else:
            in_scope = token in NEGATION_WORDS or "n't" in token
            marked.append(token)
    return marked''',
    "the input list marked in place": '''
def mark_negated(tokens):
    in_scope = False
    for i, token in enumerate(tokens):
        if in_scope and token in CLAUSE_END:
            in_scope = False
        elif in_scope:
            tokens[i] = token + "_NEG"
        else:
            in_scope = token in NEGATION_WORDS or "n't" in token
    return tokens''',
}
