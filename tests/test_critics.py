"""The signing critic of a review: the stated rule on hand-written lines and on real reviews read by eye."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from helpers import critics, data
from helpers.critics import (
    critic_disjoint_folds,
    critic_in_training,
    critic_table,
    signature,
    signed_critic,
)
from helpers.errors import InputError

FILLER = " ".join(["the plot moves along and the actors do what they can ."] * 20)  # 240 tokens


def review(head: str = "", tail: str = "") -> str:
    """A review in the corpus's form with ``head`` at its start and ``tail`` at its end."""
    return " ".join(part for part in (head, FILLER, tail) if part)


@pytest.mark.parametrize("text, kind, name", [
    (review(tail="overall rating= review by david wilcock web space provided by geocities"),
     "byline", "david wilcock"),
    (review(tail="a david wilcock review ? 1998 \" you know , for kids \" - norville barnes"),
     "byline", "david wilcock"),
    (review(tail="reviewed by brandon herring 4/29/00 for more reviews please visit"),
     "byline", "brandon herring"),
    (review(tail="an eclectic collection of film reviews by james kendrick http : //www . bigfoot . com"),
     "byline", "james kendrick"),
    (review("\" mafia ! \" - crime isn't a funny business by homer yen ( c ) 1998 on a night"),
     "byline", "homer yen"),
    (review("susan granger's review of \" osmosis jones \" ( warner bros . )"), "byline", "susan granger"),
    (review("bob the happy bastard's quickie review : the mummy"), "byline", "bob the happy bastard"),
    (review("by phil curtolo mel gibson ( braveheart ) gave"), "byline", "phil curtolo"),
    (review(tail="this review is copyright 1996 by christopher e . meadows . permission granted"),
     "copyright", "christopher e. meadows"),
    (review(tail="under any circumstance . copyright ( c ) 1997 tim jandt \" >"), "copyright", "tim jandt"),
    (review(tail="much more . ( c ) 1999 , jamey hughton . . . ."), "copyright", "jamey hughton"),
    (review(tail="a chick flick . ? 1999 eugene novikov&#137 ;"), "copyright", "eugene novikov"),
    (review(tail="chi mcbride written by randy turgeon , january 22 , 1998"), "copyright", "randy turgeon"),
    (review(tail="( michael redman has lost count of how many years he's been writing this column )"),
     "column", "michael redman"),
    (review(tail="make it stop ! ! where's joblo coming from ? american psycho ( 9/10 ) - cruel intentions"),
     "formula", "joblo"),
    (review(tail="on the granger movie gauge of 1 to 10 , \" the watcher \" is an awful 2 ."),
     "formula", "granger"),
    (review(tail="( partly because of the slang ) jeremy dennison mr . orange@centuryinter . net"),
     "email", "jeremy dennison"),
    (review(tail="would like to voice an opinion about this , e-mail me at venom8@hotmail . com ."),
     "address", "venom8"),
])
def test_each_signature_of_the_rule_names_its_critic(text, kind, name):
    assert signature(text) == (kind, name)


@pytest.mark.parametrize("text", [
    review("directed by john woo . written by david j . schow and john shirley , based on the comic"),
    review("written by randy turgeon and his brother , a script that"),  # credits: no date follows
    review(tail="\" you know , for kids \" - norville barnes"),  # a closing quotation, not a signature
    review(tail="\" --michael jordan"),
    review(tail="it's different , ( b ) it's new , and ( c ) it's pretentious ."),  # a list, not (c)
    review(tail="a four star review from me , a quick review : see it ."),  # no name before "review"
    review(tail="i wrote this review by the time the credits rolled ."),  # "by" + stop words
    review(tail="on the 0 to 10 scale and a 0 on the -4 to +4 scale ."),  # a rating key naming no one
    review(tail="the flying inkpot's rating system : * wait for the video ."),
    review(tail="if you want to talk , e-mail me ."),  # no address
    review("the movie stars john travolta , reviewed by critics everywhere as"),  # "by" + a stop word
])
def test_lines_that_are_not_signatures_name_no_one(text):
    assert signature(text) is None


def test_only_the_head_and_the_tail_are_read():
    body = " ".join(["word"] * 200)
    inside = f"{body} a film review by michael redman copyright 2000 {body}"
    assert signature(inside) is None
    assert signature("by windsor davies and jack douglas who " + body) == ("byline", "windsor davies")
    # a start-anchored byline counts only at the review's start, not at the start of its tail
    assert signature(body + " by windsor davies and jack douglas who " + body[:500]) is None


def test_names_that_end_one_longer_name_are_merged_and_others_kept():
    texts = [review(tail="( michael redman has written this column for 23 years )"),
             review(tail="redman@bvoice . com is the eaddress"),
             review("the happy bastard's 30-second review : notting hill"),
             review("bob the happy bastard's quickie review : rush hour"),
             review(tail="a film review by mike watson"), review(tail="a film review by scott watson"),
             review(tail="watson@example . com"), FILLER]
    found = signed_critic(texts)
    assert found.index.tolist() == list(range(len(texts)))
    assert found.iloc[:6].tolist() == ["michael redman", "michael redman", "bob the happy bastard",
                                       "bob the happy bastard", "mike watson", "scott watson"]
    assert found.iloc[6] == "watson"  # the last words of two longer names: which is unknown
    assert pd.isna(found.iloc[7])


# Real reviews whose signature was read by eye (and, for the unsigned, a formula naming no one).
READ_BY_EYE = {
    "cv000_29416": "joblo", "cv993_29737": "joblo", "cv076_26009": "susan granger",
    "cv001_19502": "bob the happy bastard", "cv355_18174": "bob the happy bastard",
    "cv360_8398": "michael redman", "cv169_24973": "michael redman", "cv047_18725": "eugene novikov",
    "cv080_14899": "david wilcock", "cv891_6385": "christopher e. meadows",
    "cv270_6079": "jeremy dennison", "cv368_10466": "venom8", "cv551_11214": "randy turgeon",
    "cv494_17389": "karl rackwitz", "cv602_8830": "phil curtolo",
    "cv005_29357": None,  # "... on the -4 to +4 scale": one critic's key, no name
    "cv042_11927": None,  # "high art runs 1 : 36 . it is rated r ..."
    "cv039_5963": None,  # the Flying Inkpot's rating key
    "cv660_23140": None,  # "mrs . joblo also likened this movie ...": JoBlo without his formula
    "cv089_12222": None,  # "( c ) it's pretentious": a list item
    "cv367_22792": None,  # "... that neil jordan exquisitely writes and directs"
}


@pytest.fixture(scope="module")
def reviews(corpora):
    return data.load_movie_reviews()


def test_real_reviews_read_by_eye(reviews):
    found = signed_critic(reviews.text).set_axis(reviews.doc_id)
    for doc_id, name in READ_BY_EYE.items():
        assert (pd.isna(found[doc_id]) if name is None else found[doc_id] == name), doc_id


def test_what_the_rule_finds_in_the_corpus_is_what_the_docstring_says(reviews):
    table = critic_table(reviews)
    assert (table.reviews.sum(), len(table)) == (122, 27)
    top = table.head(6).set_index("critic")
    assert top.reviews.tolist() == [22, 18, 15, 14, 13, 12]
    assert (top.pos > 0).all() and (top.neg > 0).all() and top.folds.between(6, 10).all()
    assert tuple(top.loc["joblo", ["pos", "neg", "lowest_cv", "highest_cv", "folds"]]) == (13, 9, 0, 993, 10)
    assert "JoBlo's 22 run\nfrom cv000 to cv993" in critics.__doc__


@pytest.mark.parametrize("pattern, count", [
    (r"the 0 to 10 scale and .{0,20} the -4 to \+4 scale", 23), (r"runs \d : \d\d \.", 23),
    (r"^seen .{0,250}\[theater rating", 8), (r"flying inkpot", 15), (r"\bjoblo\b", 4)])
def test_the_known_misses_are_as_the_docstring_counts_them(reviews, pattern, count):
    unsigned = reviews.text[signed_critic(reviews.text).isna().to_numpy()]
    assert len(unsigned) == 1878
    assert sum(bool(re.search(pattern, text)) for text in unsigned) == count
    assert f" {count} " in " ".join(critics.__doc__.split())


def test_critic_table_counts_classes_ids_and_folds():
    reviews = pd.DataFrame({
        "cv": [5, 17, 900, 3, 4], "fold": [5, 7, 0, 3, 4], "label": ["pos", "neg", "pos", "neg", "pos"],
        "text": [review(tail="? 1999 eugene novikov"), review(tail="? 1998 eugene novikov"),
                 review(tail="? 1997 eugene novikov"), review(tail="review by chris hill ."), FILLER]})
    table = critic_table(reviews)
    assert table.to_dict("records") == [
        {"critic": "eugene novikov", "reviews": 3, "pos": 2, "neg": 1, "lowest_cv": 5, "highest_cv": 900,
         "folds": 3},
        {"critic": "chris hill", "reviews": 1, "pos": 0, "neg": 1, "lowest_cv": 3, "highest_cv": 3,
         "folds": 1}]


def test_critic_in_training():
    names = pd.Series(["a", "a", "b", pd.NA, "c", "c"], dtype=object)
    assert critic_in_training(names, [0, 1, 2, 0, 3, 3]).tolist() == [True, True, False, False, False, False]


def test_critic_disjoint_folds_on_the_corpus(reviews):
    folds = critic_disjoint_folds(reviews)
    found = signed_critic(reviews.text)
    assert not critic_in_training(found, folds).any()
    assert critic_in_training(found, reviews.fold.to_numpy()).sum() == 105
    # only signed reviews (and near copies of them) move; every near copy stays with its twin
    copies = critics.overlap.similarity_groups(reviews.text)
    moved = folds != reviews.fold.to_numpy()
    signed_or_copy = np.isin(copies, copies[found.notna().to_numpy()])
    assert set(np.flatnonzero(moved)) <= set(np.flatnonzero(signed_or_copy))
    assert (pd.Series(folds).groupby(copies).nunique() == 1).all()
    counts = pd.crosstab(folds, reviews.label)
    assert counts.sum(axis=1).between(196, 206).all() and counts.to_numpy().min() >= 97
    joblo = folds[(found == "joblo").to_numpy()][0]
    assert (counts.sum(axis=1)[joblo], (folds == joblo).sum() - 22) == (206, 184)
    assert "held 184 others, so it holds 206" in " ".join(critic_disjoint_folds.__doc__.split())
    assert (critic_disjoint_folds(reviews) == folds).all()  # deterministic


def distinct_text(seed: int, tail: str = "") -> str:
    """A text of made-up words that shares too little with any other to be its near copy."""
    words = np.random.default_rng(seed).integers(0, 10_000, size=60)
    return " ".join([f"w{word}" for word in words] + [tail])


def test_critic_disjoint_folds_balances_classes_on_a_small_case():
    names = ["ann lee"] * 4 + ["bob ray"] * 2 + ["cy dee"] * 2
    texts = [distinct_text(i, f"? 1999 {name}") for i, name in enumerate(names)]
    texts += [distinct_text(i) for i in range(8, 16)]
    frame = pd.DataFrame({"text": texts, "fold": [0] * 8 + [0, 1, 0, 1, 0, 1, 0, 1],
                          "label": ["pos", "neg"] * 8})
    folds = critic_disjoint_folds(frame, n_folds=2)
    assert (folds[8:] == frame.fold[8:]).all()  # unsigned reviews stay
    assert len(set(folds[:4])) == len(set(folds[4:6])) == len(set(folds[6:8])) == 1
    assert sorted(np.bincount(folds)) == [8, 8]


@pytest.mark.parametrize("call, message", [
    (lambda: signed_critic("one review as a string"), "not str"),
    (lambda: signed_critic([]), "empty"),
    (lambda: signed_critic(["fine", None]), r"texts\[1\]"),
    (lambda: critic_table(pd.DataFrame({"text": ["a"]})), "lacks the column"),
    (lambda: critic_disjoint_folds(pd.DataFrame({"text": ["a"], "label": ["pos"], "fold": [3]}), n_folds=2),
     "0 to n_folds - 1"),
    (lambda: critic_disjoint_folds(pd.DataFrame({"text": ["a"], "label": ["pos"], "fold": [0.0]})),
     "whole numbers"),
    (lambda: critic_disjoint_folds(pd.DataFrame({"text": ["a"], "label": ["pos"], "fold": [0]}), n_folds=1),
     "n_folds"),
    (lambda: critic_in_training(["a", "b"], [0]), "length"),
    (lambda: critic_in_training(["a"], [0.5]), "whole numbers"),
])
def test_input_errors(call, message):
    with pytest.raises(InputError, match=message):
        call()
