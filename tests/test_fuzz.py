"""Fuzzing the public functions: any input gives a valid result or one InputError, nothing else.

Each test draws arguments that are either well formed or arbitrary (wrong types, NaN and
infinity, empty, ragged, negative, huge) and calls the function. A result must be valid
(finite, of the right shape and range); a refusal must be an ``InputError``; any other
exception fails the test, with hypothesis's smallest example. Sizes stay small so that the
whole file runs in well under a minute on a busy machine. ``TALLY`` counts the outcomes,
printed at the end of the module (run with ``-s`` to see it); each call in a test must give a
valid result for some example, so a function that refused every input would fail.
"""

from __future__ import annotations

import math
import sys
import tempfile
import warnings
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from helpers import (
    adversarial,
    annotation,
    embedding_space,
    evaluation,
    features,
    leakage,
    own_reviews,
    projector,
    significance,
    text,
    transport,
    validation,
)
from helpers.errors import InputError, KitError
from helpers.naive_bayes import NaiveBayes

TALLY: Counter[str] = Counter()
# Derandomized: CI draws the same cases every run, so a failure is never a fluke of the draw.
# The per-test fixture below counts over all of a test's examples, as meant.
_QUIET = [HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
FAST = settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=_QUIET)
SLOW = settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=_QUIET)
#: This test's outcomes by the line that called ``outcome``.
SITES: dict[int, Counter[str]] = {}
HIGHEST_SIMILARITY = 1 + validation.SIMILARITY_ROUNDING


@pytest.fixture(scope="module", autouse=True)
def tally():
    yield
    print(f"\nfuzz cases: {sum(TALLY.values())} ({dict(TALLY)})")


@pytest.fixture(autouse=True)
def some_input_is_accepted(request):
    SITES.clear()
    yield
    never = sorted(line for line, seen in SITES.items() if not seen["valid result"])
    assert not never, (f"{request.node.name}: the calls on lines {never} refused every input drawn: a "
                       "function that refused everything would pass")


def outcome(call: Callable[[], object], valid: Callable[[object], bool]) -> None:
    """Call; a result must pass ``valid``; only an InputError may be raised."""
    site = SITES.setdefault(sys._getframe(1).f_lineno, Counter())
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # overflow and convergence notes are not the question here
            result = call()
    except InputError as err:
        assert str(err), "an InputError must say what was wrong"
        TALLY["clear error"] += 1
        site["clear error"] += 1
        return
    assert valid(result), f"not a valid result: {result!r}"
    TALLY["valid result"] += 1
    site["valid result"] += 1


# --------------------------------------------------------------------------- strategies

edges = st.sampled_from([0, -1, 10**9, 10**20, -10**20, 1e308, -0.0, math.nan, math.inf, -math.inf, "", "1"])
scalars = st.one_of(edges, st.none(), st.booleans(), st.integers(-10**20, 10**20), st.floats(),
                    st.text(max_size=4), st.complex_numbers(max_magnitude=10, allow_nan=False))
numbers = st.lists(st.floats(), max_size=8)
binary = st.lists(st.sampled_from([0, 1, True, False]), min_size=1, max_size=8)
ragged = st.lists(st.lists(st.floats(-1, 1), max_size=3), min_size=1, max_size=4)
arrays = hnp.arrays(st.sampled_from([np.float64, np.int64, np.bool_, np.float32]),
                    hnp.array_shapes(min_dims=0, max_dims=3, max_side=4))
anything = st.one_of(scalars, st.lists(scalars, max_size=6), numbers, binary, ragged, arrays,
                     st.dictionaries(st.text(max_size=3), scalars, max_size=3))
small_floats = st.floats(-1e3, 1e3, allow_nan=False)
vectors = hnp.arrays(np.float64, st.tuples(st.integers(1, 6), st.integers(1, 4)),
                     elements=st.floats(-1e300, 1e300))
texts = st.lists(st.text(alphabet="ab ,.!<>'-/\n", max_size=12), min_size=1, max_size=5)
any_texts = st.one_of(texts, st.lists(st.one_of(st.text(max_size=6), scalars), max_size=5), anything)


def either(good, bad=anything):
    """Mostly well-formed arguments, so that calls get past the first check often."""
    return st.one_of(good, good, bad)


def probability(p) -> bool:
    return 0.0 <= p <= 1.0


# --------------------------------------------------------------------------- significance


@FAST
@given(either(binary), either(binary))
def test_sign_test(a, b):
    outcome(lambda: significance.sign_test(a, b),
            lambda r: probability(r.p_value) and r.plus + r.minus + r.ties == len(a))


@FAST
@given(either(st.lists(small_floats, min_size=1, max_size=8)),
       either(st.lists(small_floats, min_size=1, max_size=8)), either(st.integers(1, 50)),
       either(st.integers(0, 5)), either(st.sampled_from(["auto", True, False])))
def test_permutation_test(a, b, n_resamples, seed, exact):
    outcome(lambda: significance.permutation_test(a, b, n_resamples=n_resamples, seed=seed, exact=exact),
            lambda r: probability(r.p_value) and math.isfinite(r.statistic))


@FAST
@given(either(binary), either(st.floats(0.01, 0.99)))
def test_accuracy_interval(correct, confidence):
    outcome(lambda: significance.accuracy_interval(correct, confidence),
            lambda r: all(map(probability, r)) and r[1] <= r[0] <= r[2])


@FAST
@given(either(st.lists(st.floats(0, 1), min_size=1, max_size=8)), either(binary),
       either(st.sampled_from(["equal", "quartiles"])))
def test_lowest_vs_highest(similarity, correct, bins):
    outcome(lambda: significance.lowest_vs_highest(similarity, correct, bins),
            lambda r: probability(r["p_value"]) and r["n_low"] >= 1)


def _systems_of(n: int):
    """Two or three systems' 0/1 scores on the same ``n`` items."""
    return st.dictionaries(st.sampled_from(["nb", "svm", "d2v"]),
                           st.lists(st.sampled_from([0, 1, True, False]), min_size=n, max_size=n),
                           min_size=2, max_size=3)


same_items = st.integers(1, 8).flatmap(_systems_of)


@SLOW
@given(either(same_items, st.dictionaries(st.sampled_from(["nb", "svm", "d2v"]), binary, max_size=3)),
       either(st.just([("nb", "svm")]),
              st.lists(st.tuples(st.sampled_from(["nb", "svm", "x"]), st.sampled_from(["nb", "svm"])),
                       max_size=2)),
       either(st.integers(1, 20)))
def test_compare(correct, pairs, n_resamples):
    outcome(lambda: significance.compare(correct, pairs, n_resamples=n_resamples, progress=False),
            lambda r: r.sign_p.between(0, 1).all() and r.perm_p.between(0, 1).all())


@FAST
@given(either(st.lists(st.floats(0, 1), min_size=1, max_size=8)))
def test_holm(p_values):
    outcome(lambda: significance.holm(p_values),
            lambda r: all(map(probability, r)) and len(r) == len(p_values))


@SLOW
@given(either(st.integers(1, 30)), either(st.floats(0, 1)), either(st.floats(-0.3, 0.3)),
       either(st.floats(0, 1)), either(st.integers(1, 3)), either(st.floats(0.01, 0.5)))
def test_simulate_power(n, accuracy, difference, discordance, trials, alpha):
    # Valid sizes are bounded here: a huge n or trials is a long run, not a wrong input.
    if isinstance(n, int) and n > 30 or isinstance(trials, int) and trials > 3:
        return
    outcome(lambda: significance.simulate_power(n, accuracy, difference, discordance, trials, alpha,
                                                n_resamples=20, progress=False),
            lambda r: all(map(probability, r.values())))


# --------------------------------------------------------------------------- transport


@FAST
@given(either(st.floats(0.01, 1)), either(st.one_of(st.floats(0, 1), st.lists(st.floats(0, 1), max_size=5))))
def test_tau_p_and_mean(source, target):
    outcome(lambda: transport.tau_p(source, target),
            lambda r: np.all(np.isfinite(r)) and np.all(np.asarray(r) >= 0))
    outcome(lambda: transport.mean_tau_p(source, target), lambda r: math.isfinite(r) and r >= 0)


@FAST
@given(either(st.lists(st.floats(0, 2), min_size=2, max_size=6)), st.booleans())
def test_tau_var(values, correction):
    outcome(lambda: transport.tau_var(values, correction), lambda r: math.isfinite(r) and r >= 0)


@FAST
@given(either(vectors))
def test_domain_vector(found):
    outcome(lambda: transport.domain_vector(found), lambda r: np.isclose(np.linalg.norm(r), 1))


@FAST
@given(either(st.lists(st.floats(-1e300, 1e300), min_size=1, max_size=4)),
       either(st.lists(st.floats(-1e300, 1e300), min_size=1, max_size=4)), either(st.floats(1e-6, 1)))
def test_cosine_distance_and_kl_divergence(u, v, epsilon):
    outcome(lambda: transport.cosine_distance(u, v), lambda r: 0 <= r <= 2)
    outcome(lambda: transport.kl_divergence(u, v, epsilon), lambda r: math.isfinite(r) and r >= -1e-12)


@SLOW
@given(either(st.lists(st.floats(0, 1), min_size=4, max_size=7)),
       either(st.lists(st.floats(0, 1), min_size=4, max_size=7)))
def test_fit_decay_and_loo_mae(x, y):
    outcome(lambda: transport.fit_decay(x, y), lambda r: r.shape == (3,) and np.isfinite(r).all())
    outcome(lambda: transport.loo_mae(x, y), lambda r: math.isfinite(r) and r >= 0)


@FAST
@given(any_texts, any_texts)
def test_lexical_difference(source, target):
    outcome(lambda: transport.lexical_difference(source, target), probability)


@FAST
@given(either(st.sets(st.text(max_size=3), max_size=4)), any_texts)
def test_oov_rate(source, target_tokens):
    outcome(lambda: transport.oov_rate(source, target_tokens), probability)


@SLOW
def _per_target(correct: dict) -> dict:
    """Each system's scores as the per-target tables ``paired_tests`` takes."""
    return {name: pd.DataFrame({"target": (["t", "u"] * 4)[:len(c)], "correct": c,
                                "doc_id": [f"d{i}" for i in range(len(c))]}) for name, c in correct.items()}


@SLOW
@given(either(same_items.map(_per_target),
              st.dictionaries(st.sampled_from(["nb", "svm"]),
                              st.builds(lambda c: pd.DataFrame({"target": ["t", "u", "t"][:len(c)],
                                                                "doc_id": ["a", "b", "c"][:len(c)],
                                                                "correct": c}),
                                        st.lists(st.sampled_from([0, 1, True, 0.5]), min_size=1, max_size=3)),
                              max_size=2)),
       either(st.just([("nb", "svm")]),
              st.lists(st.tuples(st.sampled_from(["nb", "svm", "x"]), st.sampled_from(["nb", "svm"])),
                       max_size=2)))
def test_paired_tests(correct, pairs):
    outcome(lambda: transport.paired_tests(correct, pairs, n_resamples=20),
            lambda r: r.p.between(0, 1).all() and r.difference.between(-1, 1).all())


# --------------------------------------------------------------------------- leakage


#: Reviews made of real words, which a vectorizer keeps.
worded = st.lists(st.lists(st.sampled_from(["good", "film", "plot", "dull", "acting"]), min_size=1,
                           max_size=6).map(" ".join), min_size=1, max_size=5)


@SLOW
@given(either(worded, any_texts), either(worded, any_texts), either(st.sampled_from([1, 2, 3])),
       either(st.integers(1, 3)),
       either(st.sampled_from(["english", None, ["a"]])))
def test_train_test_overlap(train, test, ngram, chunk_size, stop_words):
    outcome(lambda: leakage.train_test_overlap(train, test, ngram, stop_words, chunk_size,
                                               progress=False, use_cache=False),
            lambda r: len(r) == len(test) and r.similarity.between(0, HIGHEST_SIMILARITY).all()
            and r.train_index.between(0, len(train) - 1).all())


@FAST
@given(either(st.lists(st.floats(0, 1), min_size=1, max_size=8)), either(binary),
       either(st.sampled_from(["equal", "quartiles"])))
def test_binning(similarity, correct, bins):
    outcome(lambda: significance.bin_codes(similarity, bins), lambda r: len(r[0]) == len(similarity)
            and set(r[0].tolist()) <= {0, 1, 2, 3})
    outcome(lambda: leakage.binned_accuracy(similarity, correct, bins),
            lambda r: len(r) == 4 and r["count"].sum() == len(correct))


# --------------------------------------------------------------------------- own reviews

#: A review sheet as a user would write it: a text and a pos/neg label per row.
good_csv = st.lists(st.tuples(st.text(alphabet="ab cd", min_size=1, max_size=8).filter(str.strip),
                              st.sampled_from(["pos", "neg", " POS "])), min_size=1, max_size=4).map(
    lambda rows: "text,label\n" + "".join(f"{text},{label}\n" for text, label in rows))
csv_text = st.one_of(
    good_csv,
    st.lists(st.lists(st.text(alphabet='ab,"\n pPoOsSnNeEgG\x00', max_size=6), max_size=4), max_size=5).map(
        lambda rows: "\n".join(",".join(row) for row in [["text", "label"], *rows])),
    st.text(alphabet='ab,"\n\r pos neg text label id\x00', max_size=40))


@SLOW
@given(st.one_of(csv_text.map(str.encode), st.binary(max_size=30)))
def test_load_reviews_from_any_csv(content):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "mine.csv"
        path.write_bytes(content)
        outcome(lambda: own_reviews.load_reviews(path),
                lambda r: list(r.columns) == ["doc_id", "label", "text"] and set(r.label) <= {"pos", "neg"}
                and not r.doc_id.duplicated().any())


entries = st.lists(st.tuples(st.sampled_from(["pos", "neg", "neutral", ".hidden", "pos/sub"]),
                             st.sampled_from(["a.txt", "B.TXT", "c.md", "d.txt/", "e.txt@"]),
                             st.binary(max_size=8)), max_size=4)


#: A folder as a user would make it: pos/ and neg/ of text files.
good_entries = st.lists(st.tuples(st.sampled_from(["pos", "neg"]), st.sampled_from(["a.txt", "B.TXT"]),
                                  st.sampled_from([b"a good film", b"dull"])), min_size=1, max_size=4)


@SLOW
@given(st.one_of(good_entries, entries))
def test_load_reviews_from_any_folder(made):
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        for where, name, content in made:
            (root / where).mkdir(parents=True, exist_ok=True)
            target = root / where / name.rstrip("/@")
            if target.is_symlink() or target.exists():
                continue
            if name.endswith("/"):
                target.mkdir()
            elif name.endswith("@"):
                target.symlink_to(root / "nowhere")
            else:
                target.write_bytes(content)
        outcome(lambda: own_reviews.load_reviews(root),
                lambda r: set(r.label) <= {"pos", "neg"} and (r.text != "").all())


# --------------------------------------------------------------------------- embedding space


@FAST
@given(either(vectors), st.booleans())
def test_unit_rows_and_centered(found, center):
    def unit_or_zero(rows):
        norms = np.linalg.norm(rows, axis=1)
        return np.isfinite(rows).all() and np.all(np.isclose(norms, 1) | (norms == 0))

    outcome(lambda: embedding_space.unit_rows(found), unit_or_zero)
    outcome(lambda: embedding_space.centered(found),
            lambda r: r.shape == np.shape(found) and not np.isnan(r).any())


def _grouped_rows(n: int):
    """``n`` vectors and a group for each."""
    return st.tuples(hnp.arrays(np.float64, (n, 3), elements=st.floats(-5, 5)),
                     st.lists(st.sampled_from(["a", "b"]), min_size=n, max_size=n))


grouped = st.integers(2, 6).flatmap(_grouped_rows)


@FAST
@given(either(grouped, st.tuples(either(vectors), either(st.lists(st.sampled_from(["a", "b", None]),
                                                                   max_size=6)))),
       either(st.one_of(st.none(), st.integers(1, 5))), either(st.integers(1, 20)), st.booleans())
def test_grouping_and_random_pairs(rows, n_anchors, n_pairs, center):
    found, groups = rows if isinstance(rows, tuple) and len(rows) == 2 else (rows, rows)
    cosine = lambda values: np.all(np.abs(values) <= 1 + 1e-9)  # noqa: E731
    outcome(lambda: embedding_space.grouping_similarity(found, groups, n_anchors, center),
            lambda r: cosine(r.within) and cosine(r.across))
    outcome(lambda: embedding_space.random_pair_similarity(found, n_pairs, center),
            lambda r: len(r) == n_pairs and cosine(r))


def _labelled_rows(n: int):
    """``n`` vectors and a label for each."""
    shape = st.tuples(st.just(n), st.integers(1, 3))
    return st.tuples(hnp.arrays(np.float64, shape, elements=st.floats(-5, 5)),
                     st.lists(st.sampled_from(["pos", "neg"]), min_size=n, max_size=n))


@SLOW
@given(either(st.integers(8, 14).flatmap(_labelled_rows),
              st.tuples(either(vectors), either(st.lists(st.sampled_from(["pos", "neg"]), max_size=14)))))
def test_order_probe(rows):
    found, labels = rows if isinstance(rows, tuple) and len(rows) == 2 else (rows, rows)
    outcome(lambda: embedding_space.order_probe(found, labels), probability)


# --------------------------------------------------------------------------- text


@FAST
@given(either(st.text(max_size=30), scalars), any_texts, either(st.integers(1, 10)))
def test_text_functions(one, many, n_words):
    outcome(lambda: text.tokenize(one), lambda r: all(t == t.lower() and t for t in r))
    outcome(lambda: text.token_spans(one), lambda r: [t for *_, t in r] == text.tokenize(one))
    outcome(lambda: text.tokenized(many), lambda r: len(r) == len(list(many)))
    outcome(lambda: text.snippet(one, n_words), lambda r: isinstance(r, str))


# --------------------------------------------------------------------------- naive bayes

counts = hnp.arrays(np.int64, st.tuples(st.integers(1, 6), st.integers(1, 4)), elements=st.integers(0, 5))


@FAST
@given(either(counts, st.one_of(anything, hnp.arrays(np.float64, (3, 2)))),
       either(st.lists(st.sampled_from(["pos", "neg"]), min_size=1, max_size=6)),
       either(st.floats(0, 2), st.one_of(st.floats(), scalars)), st.booleans())
def test_naive_bayes(X, y, alpha, sparse):
    if sparse and isinstance(X, np.ndarray) and X.ndim == 2:
        X = sp.csr_matrix(X)
    model = NaiveBayes(alpha=alpha)

    def fit_and_predict():
        assert model.fit(X, y) is model
        return model.predict(X)

    outcome(fit_and_predict, lambda r: set(r) <= set(np.asarray(y, dtype=object)) and model.alpha is alpha)


# --------------------------------------------------------------------------- validation


@FAST
@given(st.one_of(anything, st.builds(lambda n: pd.DataFrame({"a": range(n)}), st.integers(1, 3))),
       st.integers(1, 2), st.integers(0, 2))
def test_validation_checks(value, ndim, min_rows):
    outcome(lambda: validation.check_array(value, "x", ndim, min_rows),
            lambda r: r.ndim == ndim and len(r) >= min_rows and np.isfinite(r).all())
    outcome(lambda: validation.check_binary(value, "c"), lambda r: r.dtype == bool and r.ndim == 1)
    outcome(lambda: validation.check_int(value, "n", 0), lambda r: isinstance(r, int) and r >= 0)
    outcome(lambda: validation.check_number(value, "p", 0, 1), probability)
    outcome(lambda: validation.check_texts(value, "t"), lambda r: all(isinstance(t, str) for t in r))
    outcome(lambda: validation.check_labels(value, "y"), lambda r: r.ndim == 1)
    outcome(lambda: validation.check_similarities(value),
            lambda r: ((r >= 0) & (r <= HIGHEST_SIMILARITY)).all())
    outcome(lambda: validation.check_table(value, "t", ["a"]), lambda r: isinstance(r, pd.DataFrame))


# --------------------------------------------------------------------------- projector, features, evaluation


def _described_rows(n: int):
    """``n`` vectors and a line of metadata for each."""
    return st.tuples(hnp.arrays(np.float64, (n, 2), elements=st.floats(-5, 5)),
                     st.lists(st.text(alphabet="ab\t\n\\", max_size=4), min_size=n, max_size=n))


@SLOW
@given(either(st.integers(1, 6).flatmap(_described_rows),
              st.tuples(either(vectors), either(st.lists(st.text(alphabet="ab\t\n\\", max_size=4), min_size=1,
                                                         max_size=6)))),
       either(st.text(alphabet="abc_-", min_size=1, max_size=5)))
def test_export_projector(rows, name):
    found, metadata = rows if isinstance(rows, tuple) and len(rows) == 2 else (rows, rows)
    with tempfile.TemporaryDirectory() as folder:
        outcome(lambda: projector.export_projector(found, metadata, folder, name, config=False),
                lambda paths: all(Path(p).is_file() for p in paths.values()))


@FAST
@given(either(st.sampled_from(["unigram", "bigram", "both"])), either(st.booleans()), either(st.booleans()),
       either(st.integers(1, 3)), either(st.one_of(st.none(), st.integers(1, 50))), either(st.booleans()))
def test_make_vectorizer(ngram, binary, stemming, min_df, max_features, tfidf):
    outcome(lambda: features.make_vectorizer(ngram, binary, stemming, min_df, max_features, tfidf),
            lambda vectorizer: hasattr(vectorizer, "fit_transform"))


def _predictions(folds: list[int], correct: list) -> pd.DataFrame:
    correct = (correct + [1] * len(folds))[:len(folds)]
    return pd.DataFrame({"doc_id": [f"d{i}" for i in range(len(folds))], "fold": folds, "system": "nb",
                         "correct": correct})


predictions = st.builds(_predictions, st.lists(st.integers(0, 3), min_size=1, max_size=8),
                        st.lists(st.sampled_from([0, 1, True, False]), max_size=8))


@FAST
@given(st.one_of(predictions, anything, predictions.map(lambda t: t.assign(correct=np.nan)),
                 predictions.map(lambda t: t.drop(columns="fold"))))
def test_summarize_and_fold_accuracies(table):
    outcome(lambda: evaluation.fold_accuracies(table), lambda r: r.between(0, 1).all())
    outcome(lambda: evaluation.summarize(table), lambda r: 0 <= r["accuracy"] <= 1 and r["n"] == len(table))


def _sheet(rows: list) -> str:
    """An annotation sheet as ``kit annotate`` writes it, with the given entries filled in."""
    header = ",".join(annotation.SHEET_COLUMNS)
    return header + "\n" + "".join(f"d{i},nb,pos,0.5,a snippet,,{category},{fixability},{source},\n"
                                   for i, (category, fixability, source) in enumerate(rows))


entry = st.tuples(st.sampled_from(["negation", "sarcasm", ""]), st.sampled_from([*annotation.FIXABILITY, ""]),
                  st.sampled_from([*annotation.SOURCES, ""]))
good_sheet = st.lists(entry, min_size=1, max_size=4).map(_sheet)


@SLOW
@given(st.one_of(good_sheet, csv_text,
                 st.text(alphabet='ab,;"\n doc_id category fixability easy', max_size=60)))
def test_read_annotations_from_any_csv(content):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "errors.csv"
        path.write_text(content, encoding="utf-8")
        try:
            outcome(lambda: annotation.read_annotations(path), lambda r: "annotated" in r)
        except KitError as err:  # a sheet that is not the kit's is the user's to fix: a KitError says how
            assert str(err)
            TALLY["clear error"] += 1


# --------------------------------------------------------------------------- adversarial

words = st.sampled_from(["not", "a", "good", "film", "bad", "."])
sentences = st.lists(st.lists(words, min_size=1, max_size=6), min_size=1, max_size=5)
generators = st.integers(0, 2**32 - 1).map(np.random.default_rng)


def _is_sentence_from(tokens: list[str]):
    return lambda fake: fake is None or (isinstance(fake, list) and all(isinstance(t, str) for t in fake)
                                         and len(fake) == len(tokens) and fake != list(tokens))


@FAST
@given(either(sentences), either(st.integers(1, 4)), either(st.integers(1, 3)),
       either(st.one_of(st.none(), st.integers(1, 4))), either(st.lists(words, max_size=3)))
def test_ngram_lm(found, order, min_count, scored, context):
    def model():
        return adversarial.NgramLM(order, min_count).fit(found)

    outcome(lambda: model().mean_logprob(found, scored),
            lambda r: len(r) == len(found) and bool(np.all(np.asarray(r) <= 0)))
    outcome(lambda: model().score("film", context, scored), lambda p: 0 < p <= 1)


@FAST
@given(either(st.lists(words, max_size=8)), either(generators), either(st.integers(1, 2)))
def test_zelligs(tokens, rng, k):
    lm = adversarial.NgramLM(order=2, min_count=1).fit([["not", "a", "good", "film", "."],
                                                        ["a", "bad", "film"]])
    flip = adversarial.FlipSentiment({"pos": ["good"], "neg": ["bad"]}, {"good": 60, "bad": 60}, k=1)
    for zellig in (adversarial.SwapAdjacent(), adversarial.ShuffleWindow(), flip,
                   adversarial.BigramSubstitute(lm, k=k)):
        outcome(lambda zellig=zellig: zellig.corrupt(tokens, rng), _is_sentence_from(tokens))
