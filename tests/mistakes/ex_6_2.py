"""Exercise 6.2, nearest_words: the n words with the highest cosine to a word."""

EXERCISE = "6.2"

_HEAD = '''
def nearest_words(model, word, n):
'''

MISTAKES = {
    "the word itself kept (it is its own nearest word)": _HEAD + '''
    unit = model.wv.vectors / np.linalg.norm(model.wv.vectors, axis=1, keepdims=True)
    cosine = unit @ unit[model.wv.key_to_index[word]]
    return [model.wv.index_to_key[i] for i in np.argsort(-cosine)[:n]]''',
    "raw dot products, not cosines": _HEAD + '''
    scores = model.wv.vectors @ model.wv.vectors[model.wv.key_to_index[word]]
    order = [i for i in np.argsort(-scores) if model.wv.index_to_key[i] != word]
    return [model.wv.index_to_key[i] for i in order[:n]]''',
    "the smallest Euclidean distance between raw vectors": _HEAD + '''
    distance = np.linalg.norm(model.wv.vectors - model.wv.vectors[model.wv.key_to_index[word]], axis=1)
    order = [i for i in np.argsort(distance) if model.wv.index_to_key[i] != word]
    return [model.wv.index_to_key[i] for i in order[:n]]''',
    "off by one: the first result dropped as 'the word itself' without looking": _HEAD + '''
    unit = model.wv.vectors / np.linalg.norm(model.wv.vectors, axis=1, keepdims=True)
    cosine = unit @ unit[model.wv.key_to_index[word]]
    return [model.wv.index_to_key[i] for i in np.argsort(-cosine)[1:n]]''',
}
