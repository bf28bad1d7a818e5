"""Exercise 4.1, train_dbow: PV-DBOW with the kit's IMDB settings, one worker."""

EXERCISE = "4.1"

_HEAD = '''
def train_dbow(corpus_path, vector_size=100, epochs=10, seed=0):
'''

MISTAKES = {
    "PV-DM (dm=1) instead of PV-DBOW": _HEAD + '''
    return Doc2Vec(corpus_file=str(corpus_path), dm=1, vector_size=vector_size, window=10,
                   min_count=2, negative=5, hs=0, sample=0, epochs=epochs, seed=seed, workers=1)''',
    "gensim's default min_count (5) and sample (0.001) left in": _HEAD + '''
    return Doc2Vec(corpus_file=str(corpus_path), dm=0, vector_size=vector_size, window=10,
                   negative=5, hs=0, epochs=epochs, seed=seed, workers=1)''',
    "several workers (not reproducible, not the kit's model)": _HEAD + '''
    return Doc2Vec(corpus_file=str(corpus_path), dm=0, vector_size=vector_size, window=10,
                   min_count=2, negative=5, hs=0, sample=0, epochs=epochs, seed=seed, workers=2)''',
    "the arguments written in as the defaults (100 dimensions, 10 epochs, seed 0)": _HEAD + '''
    return Doc2Vec(corpus_file=str(corpus_path), dm=0, vector_size=100, window=10,
                   min_count=2, negative=5, hs=0, sample=0, epochs=10, seed=0, workers=1)''',
    "the seed not passed on (gensim's default seed 1)": _HEAD + '''
    return Doc2Vec(corpus_file=str(corpus_path), dm=0, vector_size=vector_size, window=10,
                   min_count=2, negative=5, hs=0, sample=0, epochs=epochs, workers=1)''',
}
