"""Exercise 4.1, train_dbow: PV-DBOW with the kit's IMDB settings, reproducibly (one worker, the seed)."""

EXERCISE = "4.1"

_HEAD = '''
def train_dbow(corpus_path, vector_size=100, epochs=10, seed=0):
'''

_VARIANT = '''


def my_variant():
    return {"workers": 3}'''

_BODIES = {
    "PV-DM (dm=1) instead of PV-DBOW": _HEAD + '''
    return Doc2Vec(corpus_file=str(corpus_path), dm=1, vector_size=vector_size, window=10,
                   min_count=2, negative=5, hs=0, sample=0, epochs=epochs, seed=seed, workers=1)''',
    "the architecture not chosen (gensim's default dm=1, PV-DM)": _HEAD + '''
    return Doc2Vec(corpus_file=str(corpus_path), vector_size=vector_size, window=10,
                   min_count=2, negative=5, hs=0, sample=0, epochs=epochs, seed=seed, workers=1)''',
    "gensim's default min_count (5) and sample (0.001) left in": _HEAD + '''
    return Doc2Vec(corpus_file=str(corpus_path), dm=0, vector_size=vector_size, window=10,
                   negative=5, hs=0, epochs=epochs, seed=seed, workers=1)''',
    "several workers (not reproducible, not the kit's model)": _HEAD + '''
    return Doc2Vec(corpus_file=str(corpus_path), dm=0, vector_size=vector_size, window=10,
                   min_count=2, negative=5, hs=0, sample=0, epochs=epochs, seed=seed, workers=2)''',
    "workers not set (gensim's default, 3 threads)": _HEAD + '''
    return Doc2Vec(corpus_file=str(corpus_path), dm=0, vector_size=vector_size, window=10,
                   min_count=2, negative=5, hs=0, sample=0, epochs=epochs, seed=seed)''',
    "the arguments written in as the defaults (100 dimensions, 10 epochs, seed 0)": _HEAD + '''
    return Doc2Vec(corpus_file=str(corpus_path), dm=0, vector_size=100, window=10,
                   min_count=2, negative=5, hs=0, sample=0, epochs=10, seed=0, workers=1)''',
    "the seed not passed on (gensim's default seed 1)": _HEAD + '''
    return Doc2Vec(corpus_file=str(corpus_path), dm=0, vector_size=vector_size, window=10,
                   min_count=2, negative=5, hs=0, sample=0, epochs=epochs, workers=1)''',
    "word vectors trained too (dbow_words=1: another model)": _HEAD + '''
    return Doc2Vec(corpus_file=str(corpus_path), dm=0, dbow_words=1, vector_size=vector_size, window=10,
                   min_count=2, negative=5, hs=0, sample=0, epochs=epochs, seed=seed, workers=1)''',
}

# Every answer also names its variant (the cells after the check train it).
MISTAKES = {name: body + _VARIANT for name, body in _BODIES.items()}
