"""The shared tokeniser, HTML line breaks and snippets."""

from collections import Counter

import pytest

from helpers import data
from helpers.errors import InputError
from helpers.text import HTML_BREAK, snippet, token_spans, tokenize, tokenized


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


def test_tokenized_tokenises_each_text():
    assert tokenized(["A film.", "", "Dull<br />dull"]) == [["a", "film", "."], [], ["dull", "dull"]]


def test_html_break_matches_every_spelling():
    assert HTML_BREAK.sub(" ", "a<br>b<BR/>c<br />d") == "a b c d"


def test_snippet():
    assert snippet("a b c", 2) == "a b …" and snippet("a b", 2) == "a b"


@pytest.mark.parametrize("call, message", [
    (lambda: tokenize(None), "text must be a string, not NoneType"),
    (lambda: tokenize(["a", "list"]), "not list"),
    (lambda: token_spans(3.5), "not float"),
    (lambda: tokenized("one text"), "must be a list of texts"),
    (lambda: tokenized(["fine", float("nan")]), r"texts\[1\] is nan"),
    (lambda: snippet("a b c", 0), "n_words must be at least 1"),
    (lambda: snippet("a b c", -2), "n_words must be at least 1"),
    (lambda: snippet(None), "text must be a string"),
])
def test_bad_arguments_are_one_clear_input_error(call, message):
    with pytest.raises(InputError, match=message):
        call()
    assert tokenized([]) == []
