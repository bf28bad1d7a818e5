"""The shared tokeniser."""

from collections import Counter

from helpers import data
from helpers.text import tokenize


def test_tokenize_splits_punctuation_and_keeps_contractions():
    assert tokenize("Don't miss it!<br /><br />A sci-fi 10/10 film...") == [
        "don't", "miss", "it", "!", "a", "sci-fi", "10/10", "film", "..."]


def test_tokenize_lowercases_and_handles_html_breaks():
    assert tokenize("GREAT<br/>Film<BR />(really)") == ["great", "film", "(", "really", ")"]
    assert tokenize("") == []


def test_tokenize_reproduces_the_movie_reviews_tokenisation(corpora):
    reviews = data.load_movie_reviews()
    matched = total = 0
    for text in reviews.text:
        ours, theirs = Counter(tokenize(text)), Counter(text.split())
        matched += sum((ours & theirs).values())
        total += sum(theirs.values())
    assert matched / total > 0.995
