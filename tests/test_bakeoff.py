"""``kit bakeoff`` (K28, item 3): a class's entries scored once, in the sandbox, on reviews no
entry can see the labels of; honest, broken, slow and hostile entries each get what they earned.

The class is scored by the real command, once (``scored``): each entry is a notebook run in
bubblewrap, with the data folder's test labels hidden, and its answer read as plain data.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import nbformat
import numpy as np
import pandas as pd
import psutil
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from helpers import data, embeddings, overlap, owned
from helpers.bakeoff import BAKEOFF_NOTEBOOK, as_labels, checked_labels, dry_run
from helpers.cli import main
from helpers.course.classroom import bakeoff
from helpers.course.engine import bubblewrap, hidden, sandbox
from helpers.course.engine.limits import Job
from helpers.course.engine.nbval_run import run_notebook
from helpers.course.engine.verdict import CellResult, Ending
from helpers.course.notebook.cells import CHECK_MARKER, is_hidden
from helpers.errors import InputError, KitError

#: Reviews of each label in the class's test set (drawn from the default test set).
PER_LABEL = 20
CELL_SECONDS = 40

#: The honest entry, trained on the 2,000 reviews; the test computes its labels independently.
HONEST = """\
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.naive_bayes import MultinomialNB
from helpers import data

reviews = data.load_movie_reviews()
vectorizer = CountVectorizer(binary=True)
model = MultinomialNB().fit(vectorizer.fit_transform(reviews.text), reviews.label)

def predict_sentiment(texts):
    return model.predict(vectorizer.transform([text.lower() for text in texts]))
"""
#: Looks for the test labels wherever the kit keeps them: every file the sandbox shows is read
#: and searched for an IMDB test review's id or archive path (what a label can be read from);
#: IMDB's train split, which the rules allow, must be readable (so an empty data folder cannot
#: pass for a hidden one).
CHEAT = """\
import os, re
from helpers import data

root = os.environ["KIT_DATA_DIR"]
train = len(data.load_imdb("train"))
named = re.compile(rb"test_(?:neg|pos)_[0-9]|test/(?:neg|pos)/")
found = []
for folder, _, files in os.walk(root):
    for name in files:
        path = os.path.join(folder, name)
        try:
            with open(path, "rb") as file:
                if named.search(file.read()):
                    found.append(path)
        except OSError:
            pass

def predict_sentiment(texts):
    raise LookupError(f"no labels: {len(found)} files name a test review {found[:2]}; train {train}")
"""
#: Reads the labels off the order of the texts, had they come sorted by label.
ORDER = ("def predict_sentiment(texts):\n"
         "    return ['neg'] * (len(texts) // 2) + ['pos'] * (len(texts) - len(texts) // 2)\n")


def _vandal(victim: Path) -> str:
    return f"def predict_sentiment(texts):\n    open({str(victim)!r}, 'w').write('gone')\n"


ENTRIES = {
    "honest": [HONEST],
    "always-pos": ["def predict_sentiment(texts):\n    return ['pos'] * len(texts)\n"],
    "generator": ["def predict_sentiment(texts):\n    return (label for label in ['neg'] * len(texts))\n"],
    "order": [ORDER],
    "crash": ["def predict_sentiment(texts):\n    raise ValueError('my model is broken')\n"],
    "too-few": ["def predict_sentiment(texts):\n    return ['pos', 'neg', 'pos']\n"],
    "other-labels": ["def predict_sentiment(texts):\n    return ['positive' for _ in texts]\n"],
    "not-a-list": ["def predict_sentiment(texts):\n    return {'pos': len(texts)}\n"],
    "slow": ["import time\n\ndef predict_sentiment(texts):\n    time.sleep(600)\n"],
    "broken-cell": ["raise RuntimeError('forgot to load')\n",
                    "def predict_sentiment(texts):\n    return model(texts)\n"],
    "cheat": [CHEAT],
    "killer": ["import os, signal\n\ndef predict_sentiment(texts):\n"
               "    os.kill(os.getppid(), signal.SIGKILL)\n"],
    "typed-table": [f"ANSWERS = {['pos', 'neg'] * 300!r}\n\ndef predict_sentiment(texts):\n"
                    "    return ANSWERS[:len(texts)]\n"],
}


# --------------------------------------------------------------------------- the parts


@pytest.mark.parametrize(("answer", "shown"), [
    (["pos", "neg"], ["pos", "neg"]),
    (("pos", "neg"), ["pos", "neg"]),
    (np.array(["pos", "neg"]), ["pos", "neg"]),
    (pd.Series(["neg", "pos"]), ["neg", "pos"]),
    (np.array([1, 0]), ["1", "0"]),
    (np.array("pos"), {"returned": "ndarray"}),
    ((label for label in ["pos"]), ["pos"]),
    ("pos", {"returned": "str"}),
    ({"pos": 1}, {"returned": "dict"}),
    (3, {"returned": "int"}),
    (None, {"returned": "NoneType"}),
])
def test_an_answer_is_made_a_list_of_strings_or_named_for_what_it_is(answer, shown):
    made = as_labels(answer)
    assert made == shown and json.loads(json.dumps(made)) == shown


@pytest.mark.parametrize(("answer", "kind"), [(None, "NoneType"), ("pos", "str"), (3, "int"),
                                             ({"a": 1}, "dict")])
def test_the_bakeoff_names_an_answer_as_the_dry_run_does(answer, kind):
    """The kernel makes the answer labels, and the grader again: a description stays what it said."""
    said = f"predict_sentiment returned a {kind}, not a list of labels"
    assert checked_labels(as_labels(answer), 1) == (None, said)
    assert checked_labels(as_labels(as_labels(answer)), 1) == (None, said)


@pytest.mark.parametrize(("answer", "problem"), [
    (["pos", "neg", "neg"], ""),
    ({"returned": "dict"}, "predict_sentiment returned a dict, not a list of labels"),
    ("pos", "predict_sentiment returned a str, not a list of labels"),
    (["pos"], "predict_sentiment returned 1 label for 3 reviews"),
    (["pos", "neg"], "predict_sentiment returned 2 labels for 3 reviews"),
    (["pos", "Neg", "1"], "predict_sentiment returned labels other than 'pos' and 'neg' ('1', 'Neg')"),
])
def test_only_one_label_per_review_each_pos_or_neg_is_scored(answer, problem):
    labels, said = checked_labels(answer, 3)
    assert said == problem
    assert (labels is None) == bool(problem)
    if labels is not None:
        assert labels == tuple(answer)


@pytest.mark.data
def test_a_dry_run_calls_the_entry_as_the_bakeoff_will_and_scores_it(corpora):
    seen = []

    def always_pos(texts):
        seen.append(texts)
        return ["pos"] * len(texts)

    result = dry_run(always_pos, n=100)
    assert (result.accuracy, result.n) == (0.5, 100)
    assert result.low < 0.5 < result.high
    assert str(result).startswith("dry run on 100 IMDB train reviews: accuracy 50.0 %")
    train = data.load_imdb("train")
    [texts] = seen
    assert len(texts) == 100 and set(texts) <= set(train.text)
    with pytest.raises(InputError, match="could not score this entry: predict_sentiment returned 1 label "):
        dry_run(lambda texts: ["pos"], n=100)
    with pytest.raises(InputError, match="labels other than 'pos' and 'neg' [(]'1'[)]"):
        dry_run(lambda texts: [1] * len(texts), n=100)


@pytest.mark.parametrize(("predict", "n", "said"), [
    ("pos", 100, "predict must be your predict_sentiment function, not str"),
    (len, 101, "n must be even"),
    (len, 0, "n must be"),
])
def test_a_dry_run_refuses_what_it_cannot_run(predict, n, said):
    with pytest.raises(InputError, match=said):
        dry_run(predict, n=n)


def _films(n_films: int = 24, per_film: int = 3) -> pd.DataFrame:
    """A made-up IMDB-like table: each film's reviews share a label, and its word."""
    rng = np.random.default_rng(0)
    rows = []
    for film in range(n_films):
        label = "pos" if film % 2 else "neg"
        for _ in range(per_film):
            words = rng.choice(["good", "fine", "bad", "dull", "plot", "actor"], size=8).tolist()
            rows.append({"movie_id": f"tt{film:03d}", "label": label,
                         "text": " ".join([*words, "great" if label == "pos" else "awful", f"film{film}"])})
    return pd.DataFrame(rows)


def _build_nb(texts, labels):
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.naive_bayes import MultinomialNB
    from sklearn.pipeline import make_pipeline

    model = make_pipeline(CountVectorizer(), MultinomialNB()).fit(texts, labels)
    return lambda test: model.predict(test)


def test_cross_validate_agrees_with_scikit_learn_on_the_same_folds():
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.model_selection import StratifiedGroupKFold, cross_val_predict
    from sklearn.naive_bayes import MultinomialNB
    from sklearn.pipeline import make_pipeline

    from helpers.bakeoff import cross_validate
    from helpers.significance import accuracy_interval

    reviews = _films().sample(frac=1, random_state=1).reset_index(drop=True)
    reviews.loc[reviews.index[::4], "text"] = "plot actor"  # some reviews no system can place
    found = cross_validate(_build_nb, reviews, folds=4, seed=3)
    splitter = StratifiedGroupKFold(4, shuffle=True, random_state=3)
    pipeline = make_pipeline(CountVectorizer(), MultinomialNB())
    predicted = cross_val_predict(pipeline, reviews.text, reviews.label, groups=reviews.movie_id, cv=splitter)
    correct = predicted == reviews.label.to_numpy()
    assert (found.accuracy, found.low, found.high) == pytest.approx(accuracy_interval(correct))
    assert 0.5 < found.accuracy < 1 and found.n == len(reviews) and len(found.folds) == 4
    folds = splitter.split(reviews.text, reviews.label, reviews.movie_id)
    assert found.folds == pytest.approx([correct[test].mean() for _, test in folds])
    assert str(found).startswith(f"cross-validation on {len(reviews)} reviews, 4 folds: accuracy ")


def _film_words(texts) -> set[str]:
    return {text.split()[-1] for text in texts}  # each of _films' texts ends with its film's word


@pytest.mark.parametrize("grouped", [True, False])
def test_cross_validate_tests_no_film_it_trained_on_when_the_table_names_films(grouped):
    from helpers.bakeoff import cross_validate

    shared: list[set[str]] = []

    def build(texts, labels):
        def predict(test):
            shared.append(_film_words(texts) & _film_words(test))
            return ["pos"] * len(test)
        return predict

    reviews = _films()
    cross_validate(build, reviews if grouped else reviews.drop(columns="movie_id"), folds=6)
    assert len(shared) == 6
    # without the films named, some film is both trained on and tested: the check can fail
    assert not any(shared) if grouped else any(shared)


def test_cross_validate_keeps_a_table_s_own_folds_and_a_review_without_a_film_is_its_own():
    from helpers.bakeoff import cross_validate

    sizes: list[int] = []

    def build(texts, labels):
        return lambda test: sizes.append(len(test)) or ["pos"] * len(test)

    reviews = _films()
    cross_validate(build, reviews.drop(columns="movie_id").assign(fold=np.arange(len(reviews)) % 3))
    assert sizes == [len(reviews) // 3] * 3
    sizes.clear()
    cross_validate(build, reviews.assign(movie_id=None), folds=4)
    assert sorted(sizes) == [len(reviews) // 4] * 4


@pytest.mark.parametrize(("build", "change", "said"), [
    ("nb", {}, "build must be a function that trains a system"),
    (lambda texts, labels: "nb", {}, "build must return the system's predict_sentiment function, not str"),
    (lambda texts, labels: lambda test: ["pos"] * 3, {},
     "could not score this system: predict_sentiment returned 3 labels"),
    (lambda texts, labels: lambda test: [1] * len(test), {}, "labels other than 'pos' and 'neg' ('1')"),
    (_build_nb, {"label": "positive"}, "reviews.label must be 'pos' or 'neg', not 'positive'"),
    (_build_nb, {"text": None}, "every text must be a string"),
    (_build_nb, {"fold": 0}, "reviews.fold must name at least 2 folds"),
    (_build_nb, {"fold": [np.nan] + [0, 1] * 35 + [1]}, "reviews.fold is missing for 1 review(s)"),
    (_build_nb, {"movie_id": "tt1"}, "reviews name 1 films (movie_id): 5 folds need at least 5"),
    (_build_nb, {"label": ["neg"] * 70 + ["pos"] * 2, "fold": [0] * 70 + [1] * 2},
     "A fold's training reviews hold only one label"),
])
def test_cross_validate_refuses_what_it_cannot_score_in_one_line(build, change, said):
    from helpers.bakeoff import cross_validate

    reviews = _films().assign(**change)
    with pytest.raises(InputError, match=re.escape(said)):
        cross_validate(build, reviews)


@pytest.mark.parametrize(("arguments", "said"), [
    ({"folds": 1}, "folds must be"), ({"folds": "5"}, "folds must be"),
    ({"seed": -1}, "seed must be"), ({"seed": "x"}, "seed must be"),
])
def test_cross_validate_checks_its_arguments_before_it_trains_anything(arguments, said):
    from helpers.bakeoff import cross_validate

    built = []
    with pytest.raises(InputError, match=said):
        cross_validate(lambda texts, labels: built.append(1), _films().assign(fold=0), **arguments)
    assert not built


def test_cross_validate_needs_enough_reviews_of_each_label_for_its_folds():
    from helpers.bakeoff import cross_validate

    with pytest.raises(InputError, match="at least 5 reviews of each label"):
        cross_validate(_build_nb, _films(n_films=4, per_film=1))


def _csv(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "test.csv"
    path.write_text(text, encoding="utf-8")
    return path


def test_an_instructor_s_test_set_is_read_with_its_ids_or_row_numbers(tmp_path):
    table = bakeoff.read_test_set(_csv(tmp_path, "text,label\ngreat film,pos\ndull,neg\n"))
    assert table.to_dict("list") == {"doc_id": ["row_0", "row_1"], "label": ["pos", "neg"],
                                     "text": ["great film", "dull"]}
    table = bakeoff.read_test_set(_csv(tmp_path, "doc_id,label,text,extra\na,neg,dull,x\nb,pos,fine,y\n"))
    assert table.doc_id.tolist() == ["a", "b"]


@pytest.mark.parametrize(("text", "said"), [
    ("review,label\nfine,pos\ndull,neg\n", "needs the columns text and label; it lacks text"),
    ("text,label\nfine,pos\n", "holds 1 review(s)"),
    ("text,label\nfine,pos\ndull,negative\n", "row 3 has the label 'negative'"),
    ("text,label\nfine,pos\n  ,neg\n", "row 3 has an empty text"),
    ("doc_id,text,label\na,fine,pos\na,dull,neg\n", "needs a distinct, non-empty doc_id"),
    ("doc_id,text,label\na,fine,pos\n,dull,neg\n", "needs a distinct, non-empty doc_id"),
    ("text,label\nfine,pos\nfine,neg\n", "gives one text two labels: 'fine'"),
])
def test_a_test_set_that_cannot_be_scored_is_refused_with_one_line(tmp_path, text, said):
    with pytest.raises(KitError, match=rf"{said.replace('(', '[(]').replace(')', '[)]')}"):
        bakeoff.read_test_set(_csv(tmp_path, text))


def test_an_unreadable_test_set_is_refused(tmp_path):
    path = tmp_path / "test.csv"
    path.write_bytes(b"text,label\n\xff\xfe,pos\n")
    with pytest.raises(KitError, match="Could not read the test set"):
        bakeoff.read_test_set(path)
    with pytest.raises(KitError, match="Could not read the test set"):
        bakeoff.read_test_set(tmp_path / "missing.csv")


def test_an_entry_sees_only_the_data_it_may_train_on(tmp_path):
    files = {
        "aclImdb/.kit-verified": "stamp", "aclImdb/.kit-manifest.tsv": "test/neg/0_2.txt\t1\tabc",
        "aclImdb/imdbEr.txt": "0.1", "aclImdb/imdb.vocab": "the", "aclImdb/README": "read me",
        "aclImdb/test/pos/0_9.txt": "great", "aclImdb/train/pos/0_9.txt": "great",
        "cache/imdb_test_1.pkl": "..test_neg_12..", "cache/imdb_train_1.pkl": "..train_pos_1..",
        "cache/imdb_train_1.pkl.sha256": "abc", "cache/.imdb_train_1.pkl.lock": "",
        "cache/held_out_1.csv": "doc_id\ntest_pos_3", "cache/later_kind_1.pkl": "no test id in sight",
        "cache/imdb_sentences_test_1.pkl": "test words", "cache/imdb_sentences_train_1.pkl": "train words",
        "cache/review_groups_1.npy": "the 2,000 reviews' groups", "cache/review_groups_1.npy.sha256": "abc",
        "results/cv.csv": "doc_id,label\ncv001_1,pos\ncv002_17,neg", "results/cv.csv.sha256": "abc",
        # ids shaped like the 2,000 reviews' but not theirs (an instructor's test set): hidden
        "results/lookalike.csv": "doc_id,label\ncv999_99999,pos",
        "results/choice.json": '{"candidate": 1, "C": 0.1}', "results/other.json": '{"labels": ["pos"]}',
        # an explainer's fit (of the 2,000 reviews, but no file says which), and one too large to read
        "results/explainer_1.json": '{"features": ["film"], "order": [0], "weights": [0.5], '
                                    '"intercept": 0.0, "C": 0.1}',
        "results/large.json": '{"candidate": 1, "C": 0.1}' + " " * bakeoff.CHOICE_MAX_BYTES,
        "results/bow/deployed.csv": "doc_id,label\ntest_pos_7,pos",
        # a test review's id in an encoding no scan reads: hidden, since it is not a 2,000 reviews' id
        "results/bow/packed.csv": "doc_id,label\n" + base64.b64encode(b"test_pos_7").decode() + ",pos",
        "results/bow/cv.csv.corrupt-20261128-084421": "doc_id\ncv001_1",
        "models/d2v_1.model": "vectors", "models/d2v_1.model.dv.vectors.npy": "vectors",
        "models/imdb_vectors_1.npy": "vectors",
        "nltk_data/corpora/movie_reviews.zip": "reviews", "corpora/d2v.ids": "train_pos_1",
        "deployment/README.md": "", "bakeoff/test.csv": "", "aclImdb_v1.tar.gz": "",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    assert bakeoff.data_view(tmp_path, training_ids=["cv001_1", "cv002_17"]).hidden == (
        "aclImdb/.kit-manifest.tsv", "aclImdb/README", "aclImdb/imdbEr.txt", "aclImdb/test",
        "aclImdb_v1.tar.gz", "bakeoff", "cache/held_out_1.csv", "cache/imdb_sentences_test_1.pkl",
        "cache/imdb_sentences_train_1.pkl", "cache/imdb_test_1.pkl",
        "cache/later_kind_1.pkl", "corpora", "deployment", "models/imdb_vectors_1.npy",
        "results/bow/cv.csv.corrupt-20261128-084421", "results/bow/deployed.csv", "results/bow/packed.csv",
        "results/explainer_1.json", "results/large.json", "results/lookalike.csv", "results/other.json")


@pytest.mark.sandbox
def test_an_entry_sees_of_the_listed_folders_only_what_was_allowed_when_the_bakeoff_began(tmp_path):
    if bubblewrap.bwrap() is None:
        pytest.skip("no bubblewrap: apt-get install bubblewrap")
    data = tmp_path / "data"
    files = {"cache/imdb_train_1.pkl": "train", "cache/imdb_test_1.pkl": "test",
             "models/d2v_1.model": "model", "results/bow/cv.csv": "doc_id,label\ncv001_1,pos\n",
             "results/bow/test.csv": "doc_id\ntest_pos_1\n", "nltk_data/x.zip": "corpus"}
    for name, text in files.items():
        (data / name).parent.mkdir(parents=True, exist_ok=True)
        (data / name).write_text(text)
    view = bakeoff.data_view(data, training_ids=["cv001_1"])
    (data / "cache" / "imdb_train_2.pkl").write_text("after the look: of a kind shown, unseen all the same")
    (data / "results" / "bow" / "late.csv").write_text("doc_id,label\ntest_pos_1,pos\n")
    (data / "models" / "d2v_1.model").unlink()  # gone since the look: nothing to bind
    (data / "nltk_data" / "y.zip").write_text("a folder bound whole shows it")
    inside = bubblewrap.JOB_DIR / "data"
    command = bubblewrap.bwrap_command(["find", str(inside), "-type", "f"], {}, data, 16, None, view.hidden,
                                       view.listed)
    seen = subprocess.run(command, capture_output=True, text=True, timeout=60, check=True).stdout.split()
    assert sorted(seen) == [str(inside / name) for name in (
        "cache/imdb_train_1.pkl", "nltk_data/x.zip", "nltk_data/y.zip", "results/bow/cv.csv")]


def test_the_entry_notebook_runs_the_student_s_code_unchecked_then_the_grader_s_call():
    submission = new_notebook(cells=[
        new_markdown_cell("# my system"),
        new_code_cell(f"{CHECK_MARKER}\nx = 1\n##  NBVAL_CHECK_OUTPUT\nprint(x)", outputs=[
            nbformat.v4.new_output("stream", name="stdout", text="1\n")]),
        new_code_cell("def predict_sentiment(texts):\n    return ['pos'] * len(texts)"),
    ])
    run = bakeoff.entry_notebook(submission, ["a 'quoted' text", "two"])
    *theirs, wrapper, grader = run.cells
    assert [cell.source for cell in theirs] == ["x = 1\nprint(x)", submission.cells[2].source]
    assert all(cell.outputs == [] and not is_hidden(cell) for cell in [*theirs, wrapper])
    assert is_hidden(grader)
    assert f"student.{bakeoff.WRAPPER}([\"a 'quoted' text\", 'two'])" in grader.source
    assert f"def {bakeoff.WRAPPER}(texts)" in wrapper.source and "predict_sentiment(texts)" in wrapper.source
    assert grader.outputs[0].text == bakeoff.COLLECTED + "\n"


def test_what_a_hidden_check_records_reaches_the_report_and_comes_back_whole():
    recorded: list[str] = []
    printed = hidden.run("from helpers.course.engine.hidden import record\nrecord(['pos', 1])\n"
                         "record(['neg'])\nprint('done')", recorded=recorded)
    assert (printed, recorded) == ("done\n", ['["pos", 1]', '["neg"]'])
    assert hidden.run("from helpers.course.engine.hidden import record\nrecord([1])") == ""  # nowhere to go
    with pytest.raises(TypeError):
        hidden.record({1, 2})  # not JSON, whether a grader is there or not
    result = CellResult(3, Ending.PASSED, recorded=recorded[-1])
    assert CellResult.from_json(json.loads(json.dumps(result.to_json()))) == result


def test_the_sandbox_covers_hidden_data_and_refuses_to_run_where_it_cannot(tmp_path, monkeypatch):
    for path in ("aclImdb/test", "aclImdb/train", "cache", "results"):
        (tmp_path / path).mkdir(parents=True)
    (tmp_path / "cache" / "imdb_test_1.pkl").write_text("labels")
    if bubblewrap.bwrap() is not None:
        command = bubblewrap.bwrap_command(["true"], {}, tmp_path, 16, None,
                                           ("aclImdb/test", "cache/imdb_test_1.pkl", "results"))
        joined = " ".join(command)
        assert f"--ro-bind {tmp_path / 'aclImdb'} {bubblewrap.JOB_DIR / 'data' / 'aclImdb'}" in joined
        assert f"--tmpfs {bubblewrap.JOB_DIR / 'data' / 'aclImdb' / 'test'}" in joined
        assert f"--ro-bind /dev/null {bubblewrap.JOB_DIR / 'data' / 'cache' / 'imdb_test_1.pkl'}" in joined
        assert str(tmp_path / "results") not in joined
    monkeypatch.setattr(bubblewrap, "bwrap", lambda: None)
    with pytest.raises(KitError, match="only bubblewrap can hide it"):
        sandbox.run(["true"], {}, sandbox.Limits(), 10, tmp_path, hidden_data=("results",))


def test_a_leaderboard_needs_two_systems_and_lists_the_unranked():
    labels = np.array(["pos", "neg"] * 50)
    with pytest.raises(KitError, match="at least two scored systems; 1 answered"):
        bakeoff.rank({"a": labels}, labels, [])
    failed = [bakeoff.Entry("crash", None, "ValueError: broken")]
    result = bakeoff.rank({"a": labels, "kit nb": np.array(["pos"] * 100)}, labels, failed,
                          baseline_names=frozenset({"kit nb"}))
    table = bakeoff.table(result)
    assert table.system.tolist() == ["a", "kit nb", "crash"]
    assert table.kind.tolist() == ["student", "kit baseline", "student"]
    assert table["rank"].tolist()[:2] == [1, 2] and pd.isna(table["rank"].iloc[2])
    assert table.problem.tolist() == ["", "", "ValueError: broken"]


def test_the_page_escapes_every_name_and_line_and_only_counts_who_handed_in_nothing():
    labels = np.array(["pos", "neg"] * 10)
    failed = [bakeoff.Entry("<i>crash</i>", None, "ValueError: <script>x</script>"),
              bakeoff.Entry("away", None, bakeoff.ABSENT)]
    result = bakeoff.rank({"<b>a</b>": labels, "kit nb": labels[::-1]}, labels, failed,
                          baseline_names=frozenset({"kit nb"}))
    page = bakeoff.page(result, b"png", "<my test>")
    assert "<b>a</b>" not in page and "&lt;b&gt;a&lt;/b&gt;" in page
    assert "<script>" not in page and "&lt;i&gt;crash&lt;/i&gt;: ValueError: &lt;script&gt;" in page
    assert "&lt;my test&gt;" in page and "away" not in page and "1 student folder(s) held no entry" in page
    assert bakeoff.table(result).kind.tolist() == ["student", "kit baseline", "student", "student"]


def test_the_files_are_written_beside_one_the_instructor_changed(tmp_path):
    labels = np.array(["pos", "neg"] * 10)
    result = bakeoff.rank({"a$^^$b": labels, "=cmd()": labels[::-1]}, labels, [])  # "$" is no maths
    first = dict(bakeoff.write(result, tmp_path, "test.csv"))
    assert all(intended == written for intended, written in first.items())
    assert "'=cmd()" in (tmp_path / bakeoff.TABLE_FILE).read_text()  # a spreadsheet shows it as text
    (tmp_path / bakeoff.TABLE_FILE).write_text("my notes")
    again = dict(bakeoff.write(result, tmp_path, "test.csv"))
    assert (tmp_path / bakeoff.TABLE_FILE).read_text() == "my notes"
    assert again[tmp_path / bakeoff.TABLE_FILE] != tmp_path / bakeoff.TABLE_FILE


def test_a_class_that_cannot_be_ranked_is_refused_before_anything_runs(tmp_path, monkeypatch):
    (tmp_path / "kit svm-doc2vec").mkdir()
    test = pd.DataFrame({"doc_id": ["a", "b"], "label": ["pos", "neg"], "text": ["good", "bad"]})
    monkeypatch.setattr(bakeoff, "entries", lambda *args, **kwargs: pytest.fail("an entry ran"))
    monkeypatch.setattr(bakeoff, "baselines", lambda *args, **kwargs: pytest.fail("a baseline ran"))
    with pytest.raises(KitError, match=r"named like one of the kit's systems \(kit svm-doc2vec\)"):
        bakeoff.bakeoff(tmp_path, test, ["nb"])
    (tmp_path / "kit svm-doc2vec").rename(tmp_path / "only")
    with pytest.raises(KitError, match="needs at least two systems"):
        bakeoff.bakeoff(tmp_path, test, [])


FLAG = "code cell 1 holds literals of 600 items"


def test_the_leaderboard_names_each_student_by_the_alias_given(tmp_path, monkeypatch):
    for student in ("ana.lopez", "bo.chen", "cy.ng"):
        (tmp_path / student).mkdir()
    csv = tmp_path / "aliases.csv"
    csv.write_text("student,alias\nana.lopez,Red Fox\nbo.chen,Blue Owl\ncy.ng,Green Elk\n")
    aliases = bakeoff.read_aliases(csv, ["ana.lopez", "bo.chen", "cy.ng"])
    labels = np.array(["pos", "neg"] * 10)
    found = [bakeoff.Entry("ana.lopez", tuple(labels)), bakeoff.Entry("bo.chen", tuple(labels[::-1])),
             bakeoff.Entry("cy.ng", None, "ValueError: broken", flags=(FLAG,))]
    monkeypatch.setattr(bakeoff, "entries", lambda *args, **kwargs: found)
    test = pd.DataFrame({"doc_id": [f"d{i}" for i in range(20)], "label": labels, "text": ["t"] * 20})
    result = bakeoff.bakeoff(tmp_path, test, [], aliases=aliases)
    shown = bakeoff.table(result)
    assert sorted(shown.system) == ["Blue Owl", "Green Elk", "Red Fox"]
    assert shown.set_index("system")["flags"]["Green Elk"] == FLAG
    page = bakeoff.page(result, b"png", "test.csv")
    assert not any(name in page for name in ("ana.lopez", "bo.chen", "cy.ng"))
    assert "Green Elk: ValueError" in page


@pytest.mark.parametrize(("rows", "said"), [
    ("ana,Red Fox\n", "give no alias to bo"),
    ("ana,Red Fox\nbo,Red Fox\n", "'Red Fox' is given twice"),
    ("ana,\nbo,Blue Owl\n", "'' is empty"),
    ("ana,kit nb\nbo,Blue Owl\n", "'kit nb' is named like one of the kit's systems"),
    ("ana,bo\nbo,Blue Owl\n", "'bo' is another student's folder name"),
    (f"ana,{'x' * 41}\nbo,Blue Owl\n", "is over 40 characters"),
    ("ana,Red\x1b[2J Fox\nbo,Blue Owl\n", "is not printable as it is"),
    ("ana,Red Fox\nana,Green Elk\nbo,Blue Owl\n", "name 'ana' twice"),
])
def test_aliases_that_would_name_the_wrong_student_or_nobody_are_refused(tmp_path, rows, said):
    csv = tmp_path / "aliases.csv"
    csv.write_text("student,alias\n" + rows)
    with pytest.raises(KitError, match=said):
        bakeoff.read_aliases(csv, ["ana", "bo"])
    csv.write_text("name,alias\nana,Red Fox\n")
    with pytest.raises(KitError, match="need the columns student and alias"):
        bakeoff.read_aliases(csv, ["ana"])


def test_without_bubblewrap_no_entry_runs(tmp_path, monkeypatch):
    monkeypatch.setattr(sandbox, "kind", lambda: sandbox.SUBPROCESS)
    test = pd.DataFrame({"doc_id": ["a"], "label": ["pos"], "text": ["good"]})
    with pytest.raises(KitError, match="runs each entry in bubblewrap"):
        bakeoff.entries(tmp_path, test)
    with pytest.raises(KitError, match="needs the sandbox"):
        run_notebook(tmp_path / "x.ipynb", 10, Job(hidden_data=("results",)))


TINY = pd.DataFrame({"doc_id": ["a", "b", "c"], "label": ["pos", "neg", "pos"],
                     "text": ["good", "bad", "fine"]})


def test_large_literals_are_flagged_and_an_entry_s_ordinary_lists_are_not():
    cells = [new_code_cell("%time x = 1\nSTOP = " + repr(["the", "a", "an"] * 100)),   # 300 words: fine
             new_code_cell("LABELS = " + repr({str(i): "pos" for i in range(600)})),
             new_code_cell("PACKED = " + repr("x" * 6_000) + "\nrows = " + repr(tuple(range(500)))),
             new_code_cell("x = !true\n" + "\n".join(f"PART_{i} = {['pos'] * 100!r}" for i in range(6))),
             new_code_cell("def broken(:\n" + repr(["pos"] * 900)),  # no Python: its run says so
             new_code_cell("x = -" + "-" * 100_000 + "1\n" + repr(["pos"] * 900)),  # too deep to parse
             new_markdown_cell(repr(["pos"] * 900))]
    assert bakeoff.flags(new_notebook(cells=cells)) == (
        "code cell 2 holds literals of 600 items", "code cell 3 holds literals of 500 items",
        "code cell 3 holds a literal of 6,000 characters", "code cell 4 holds literals of 600 items")


def test_a_scored_entry_is_saved_and_kept_only_for_its_notebook_test_set_and_conditions(tmp_path):
    saved = bakeoff.Saved(tmp_path, TINY, "limits A")
    saved.add(bakeoff.Entry("ana", ("pos", "neg", "neg"), "", 12.5), "sha-1")
    saved.add(bakeoff.Entry("bo", ("pos",) * 3), "sha-2")
    other_test = TINY.assign(text=["good", "bad", "great"])
    bakeoff.Saved(tmp_path, other_test, "limits A").add(bakeoff.Entry("ana", ("neg",) * 3, "", 1.0), "sha-1")
    again = bakeoff.Saved(tmp_path, TINY, "limits A")
    assert again.get("ana", "sha-1") == bakeoff.Entry("ana", ("pos", "neg", "neg"), "", 12.5, kept=True)
    assert again.get("ana", "sha-changed") is None
    assert bakeoff.Saved(tmp_path, TINY, "limits B").get("ana", "sha-1") is None
    assert bakeoff.Saved(tmp_path, other_test, "limits A").get("ana", "sha-1").predictions == ("neg",) * 3
    assert bakeoff.test_key(TINY.assign(label=["neg"] * 3)) == bakeoff.test_key(TINY)  # labels are not asked
    again.add(bakeoff.Entry("bo", None, "ValueError: broken"), "sha-2")  # run again: no rank, no old score
    assert bakeoff.Saved(tmp_path, TINY, "limits A").get("bo", "sha-2") is None
    limits = bakeoff.Limits()
    assert bakeoff.conditions(("a", "b"), limits, 10, 20) == bakeoff.conditions(("b", "a"), limits, 10, 20)
    assert bakeoff.conditions(("a",), limits, 10, 20) != bakeoff.conditions(("a",), limits, 10, 30)


def test_saved_entries_that_cannot_be_read_run_again_and_a_changed_file_is_refused(tmp_path, caplog):
    path = tmp_path / bakeoff.ENTRIES_FILE
    good = {"test": bakeoff.test_key(TINY), "student": "ana", "notebook": "sha-1", "conditions": "",
            "seconds": 1.0, "predictions": ["pos", "neg", "pos"]}
    records = [good, {**good, "student": "bo", "predictions": ["pos"]}, {**good, "student": 3}, "garbage"]
    bakeoff.Saved(tmp_path, TINY).add(bakeoff.Entry("cy", ("pos",) * 3), "sha-3")  # the kit's own file
    written = json.loads(path.read_text())
    written["entries"] = records
    written["sha256"] = bakeoff._entries_digest(records)
    path.write_text(json.dumps(written))
    saved = bakeoff.Saved(tmp_path, TINY)
    assert saved.get("ana", "sha-1").predictions == ("pos", "neg", "pos")
    assert saved.get("bo", "sha-1") is None  # one label for three reviews
    assert "2 saved entries" in caplog.text
    (tmp_path / "ana").mkdir()
    for changed in (path.read_text().replace('"ana"', '"al"'), "{my notes", "[]"):
        path.write_text(changed)
        with pytest.raises(KitError, match="was changed since the kit wrote it"):
            bakeoff.Saved(tmp_path, TINY)
        with pytest.raises(KitError, match="nothing was run"):
            bakeoff.bakeoff(tmp_path, TINY, ["nb"])  # refused before the baselines are trained


def test_the_baselines_are_chosen_or_left_out_not_both(tmp_path, capsys):
    with pytest.raises(SystemExit) as stopped:
        main(["bakeoff", str(tmp_path), "--baselines", "nb", "--no-baselines"])
    assert stopped.value.code == 2 and "not allowed with argument" in capsys.readouterr().err


# --------------------------------------------------------------------------- a class, scored


@pytest.fixture(scope="module")
def test_set(corpora) -> pd.DataFrame:
    drawn = bakeoff.default_test_set(progress=False)
    return drawn.groupby("label", group_keys=False).head(PER_LABEL).reset_index(drop=True)


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def scored(tmp_path_factory, test_set):
    """The class of ``ENTRIES`` (plus a vandal, a folder without an entry and an unreadable
    one), scored by ``kit bakeoff`` with one baseline; its output, files and the class's."""
    root = tmp_path_factory.mktemp("bakeoff")
    submissions = root / "class"
    entries = {**ENTRIES, "vandal": [_vandal(submissions / "honest" / BAKEOFF_NOTEBOOK)]}
    for student, sources in entries.items():
        (submissions / student).mkdir(parents=True)
        nbformat.write(new_notebook(cells=[new_code_cell(source) for source in sources]),
                       submissions / student / BAKEOFF_NOTEBOOK)
    (submissions / "absent").mkdir()
    (submissions / "garbled").mkdir()
    (submissions / "garbled" / BAKEOFF_NOTEBOOK).write_text("{not json")
    (submissions / "surrogate").mkdir()  # a cell no file can hold: the kit cannot write it for the run
    text = nbformat.v4.writes(new_notebook(cells=[new_code_cell("x = 'SURROGATE'")]))
    (submissions / "surrogate" / BAKEOFF_NOTEBOOK).write_text(text.replace("SURROGATE", "\\ud800"))
    before = {path: _digest(path) for path in submissions.rglob("*.ipynb")}
    csv = root / "test.csv"
    test_set[["doc_id", "label", "text"]].to_csv(csv, index=False)
    run = subprocess.run([sys.executable, "-m", "helpers.cli", "bakeoff", str(submissions),
                          "--test", str(csv), "--baselines", "nb", "--timeout", str(CELL_SECONDS)],
                         capture_output=True, text=True, timeout=900)
    return {"run": run, "submissions": submissions, "before": before,
            "table": pd.read_csv(submissions / bakeoff.TABLE_FILE).fillna({"problem": ""})}




def _row(scored, system: str) -> dict:
    table = scored["table"]
    [row] = table[table.system == system].to_dict("records")
    return row


@pytest.mark.data
@pytest.mark.sandbox
@pytest.mark.kernel
@pytest.mark.slow
def test_honest_entries_and_the_baseline_are_ranked_by_what_they_got_right(scored, test_set):
    assert scored["run"].returncode == 0, scored["run"].stderr[-3000:]
    namespace: dict = {}
    exec(HONEST, namespace)  # noqa: S102 - the entry's own code, run here to score it independently
    expected = np.mean(namespace["predict_sentiment"](test_set.text.tolist()) == test_set.label.to_numpy())
    assert _row(scored, "honest")["accuracy"] == pytest.approx(expected)
    assert _row(scored, "always-pos")["accuracy"] == pytest.approx(0.5)
    assert _row(scored, "generator")["accuracy"] == pytest.approx(0.5)  # an answer the dry run takes
    assert _row(scored, "order")["accuracy"] < 1  # the texts came in an order of their own
    assert _row(scored, "kit nb")["kind"] == "kit baseline"
    ranked = scored["table"].dropna(subset=["rank"])
    assert sorted(ranked.system) == ["always-pos", "generator", "honest", "kit nb", "order", "typed-table"]
    assert (ranked.n == 2 * PER_LABEL).all()


@pytest.mark.data
@pytest.mark.sandbox
@pytest.mark.kernel
@pytest.mark.slow
@pytest.mark.parametrize(("student", "problem"), [
    ("crash", "^ValueError: my model is broken$"),
    ("too-few", f"^predict_sentiment returned 3 labels for {2 * PER_LABEL} reviews$"),
    ("other-labels", r"^predict_sentiment returned labels other than 'pos' and 'neg' \('positive'\)$"),
    ("not-a-list", "^predict_sentiment returned a dict, not a list of labels$"),
    ("slow", f"Timeout of {CELL_SECONDS} seconds exceeded"),
    ("broken-cell", r"^code cell 1 failed \(RuntimeError: forgot to load .*\); "
                    r"then NameError: name 'model' is not defined$"),
    ("cheat", r"^LookupError: no labels: 0 files name a test review \[\]; train 25000$"),
    ("killer", "."),
    ("vandal", "^(?:PermissionError|FileNotFoundError|OSError)"),
    ("absent", f"^no {BAKEOFF_NOTEBOOK}$"),
    ("garbled", r"is not a notebook the kit can run \(NotJSONError\)"),
    ("surrogate", r"is not a notebook the kit can run \(UnicodeEncodeError\)"),
])
def test_an_entry_that_cannot_be_scored_gets_one_line_and_no_rank(scored, student, problem):
    row = _row(scored, student)
    assert pd.isna(row["rank"])
    assert pd.Series([row["problem"]]).str.contains(problem).all(), row["problem"]
    assert "\n" not in row["problem"]
    assert f"no rank: {student}: " in scored["run"].stdout


@pytest.mark.data
@pytest.mark.sandbox
@pytest.mark.kernel
@pytest.mark.slow
def test_no_entry_changed_a_classmate_s_notebook_and_the_files_are_the_kit_s(scored):
    assert {path: _digest(path) for path in scored["before"]} == scored["before"]
    submissions = scored["submissions"]
    page = (submissions / bakeoff.PAGE_FILE).read_text()
    assert "data:image/png;base64," in page and "killer" in page
    pairs = pd.read_csv(submissions / bakeoff.PAIRS_FILE)
    assert len(pairs) == 15  # six ranked systems: every pair once
    assert (submissions / bakeoff.FIGURE_FILE).read_bytes().startswith(b"\x89PNG")
    assert all(not owned.changed_since_written(submissions / name)
               for name in (bakeoff.TABLE_FILE, bakeoff.PAIRS_FILE, bakeoff.PAGE_FILE, bakeoff.FIGURE_FILE))


ALWAYS = "def predict_sentiment(texts):\n    return [{label!r}] * len(texts)\n"
SLEEPER = "import time\n\ndef predict_sentiment(texts):\n    time.sleep(600)\n"
#: Seconds an entry may take to start in its sandbox and answer, on a loaded machine.
START_SECONDS = 300
#: Seconds ``kit bakeoff`` may take to stop once interrupted.
STOP_SECONDS = 60


def _enter(folder: Path, source: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    nbformat.write(new_notebook(cells=[new_code_cell(source)]), folder / BAKEOFF_NOTEBOOK)


def _bakeoff(submissions: Path, csv: Path) -> subprocess.Popen:
    """``kit bakeoff`` started as from a terminal: in a process group of its own, with SIGINT's
    default action even when pytest runs in the background (where the shell ignores it)."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        return subprocess.Popen(_bakeoff_command(submissions, csv), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, start_new_session=True)
    finally:
        signal.signal(signal.SIGINT, before)


def _bakeoff_command(submissions: Path, csv: Path) -> list[str]:
    """One entry at a time, no baselines."""
    return [sys.executable, "-m", "helpers.cli", "bakeoff", str(submissions), "--test", str(csv),
            "--no-baselines", "--jobs", "1", "--timeout", "300"]


def _lines(stream) -> queue.Queue:
    """The lines of ``stream`` as they come, read in a thread."""
    found: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: [found.put(line) for line in stream], daemon=True).start()
    return found


def _sandboxed(kit: subprocess.Popen) -> list[psutil.Process]:
    """Every process under ``kit`` once one of its entries runs in bubblewrap."""
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline and kit.poll() is None:
        tree = psutil.Process(kit.pid).children(recursive=True)
        if any(process.name() == "bwrap" for process in tree if process.is_running()):
            return tree
        time.sleep(0.5)
    raise AssertionError("no entry started in the sandbox")


@pytest.mark.data
@pytest.mark.sandbox
@pytest.mark.kernel
@pytest.mark.slow
def test_ctrl_c_stops_every_entry_keeps_those_scored_and_the_next_run_goes_on(tmp_path, test_set):
    """A real Ctrl-C (SIGINT to the command's process group) while an entry runs: every
    sandbox ends, the status is 130, and the entry scored before it is saved; the next run
    keeps it and runs the rest."""
    submissions, csv = tmp_path / "class", tmp_path / "test.csv"
    test_set[["doc_id", "label", "text"]].to_csv(csv, index=False)
    _enter(submissions / "a-quick", ALWAYS.format(label="pos"))
    for student in ("b-sleeper", "c-sleeper"):
        _enter(submissions / student, SLEEPER)
    kit = _bakeoff(submissions, csv)
    said = _lines(kit.stdout)
    try:
        assert said.get(timeout=START_SECONDS).startswith("a-quick: answered (")
        running = _sandboxed(kit)
        os.killpg(kit.pid, signal.SIGINT)
        kit.wait(timeout=STOP_SECONDS)
        err = kit.stderr.read()
        assert kit.returncode == 130 and err.endswith("kit: interrupted\n") and "Traceback" not in err, err
        time.sleep(1)  # a process killed a moment ago may take that long to be gone
        left = [p for p in running if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
        assert not left, [" ".join(p.cmdline()) for p in left]
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(kit.pid, signal.SIGKILL)
        kit.wait()
    saved = json.loads((submissions / bakeoff.ENTRIES_FILE).read_text())["entries"]
    assert [entry["student"] for entry in saved] == ["a-quick"]

    for student in ("b-sleeper", "c-sleeper"):
        _enter(submissions / student, ALWAYS.format(label="neg"))
    again = subprocess.run(_bakeoff_command(submissions, csv), capture_output=True, text=True,
                           timeout=3 * START_SECONDS)
    assert again.returncode == 0, again.stderr[-3000:]
    lines = again.stdout.splitlines()
    assert any(line.startswith("a-quick: answered (") and line.endswith("kept from an earlier run)")
               for line in lines), again.stdout
    assert sum(line.startswith(("b-sleeper: answered (", "c-sleeper: answered (")) and "kept" not in line
               for line in lines) == 2, again.stdout
    table = pd.read_csv(submissions / bakeoff.TABLE_FILE)
    assert sorted(table.dropna(subset=["rank"]).system) == ["a-quick", "b-sleeper", "c-sleeper"]


@pytest.mark.data
@pytest.mark.sandbox
@pytest.mark.kernel
@pytest.mark.slow
def test_a_table_of_answers_typed_into_an_entry_is_ranked_and_flagged_for_the_instructor(scored):
    flagged = _row(scored, "typed-table")
    assert not pd.isna(flagged["rank"]) and flagged["flags"] == "code cell 1 holds literals of 600 items"
    assert "to read: typed-table: code cell 1 holds literals of 600 items" in scored["run"].stdout
    assert scored["table"]["flags"].fillna("").str.len().astype(bool).sum() == 1
    assert "holds literals" not in (scored["submissions"] / bakeoff.PAGE_FILE).read_text()


# --------------------------------------------------------------------------- the default test set


@pytest.mark.data
@pytest.mark.slow
def test_the_default_test_set_is_held_out_of_everything_a_system_may_see(corpora):
    drawn = bakeoff.default_test_set(progress=False)
    assert len(drawn) == bakeoff.TEST_SIZE
    half = bakeoff.TEST_SIZE // 2
    assert drawn.label.value_counts().to_dict() == {"neg": half, "pos": half}
    test = data.load_imdb("test").set_index("doc_id")
    assert (test.loc[drawn.doc_id, "label"].to_numpy() == drawn.label.to_numpy()).all()
    assert (test.loc[drawn.doc_id, "text"].to_numpy() == drawn.text.to_numpy()).all()
    assert embeddings.held_out(drawn.doc_id).all()  # no Doc2Vec corpus holds them
    assert not drawn.doc_id.isin(data.imdb_sample().doc_id).any()
    trainable = pd.concat([data.load_imdb("train"), data.load_imdb("unsup")])
    assert not drawn.movie_id.isin(set(trainable.movie_id.dropna())).any()
    # the nearest text a system may see (found by another function than the one that drew them): every
    # IMDB review but the test split's held-out ones outside the deployment sample, and the 2,000 reviews
    imdb = pd.concat([data.load_imdb(split) for split in data.IMDB_SPLITS])
    unseen = imdb.doc_id.str.startswith("test_") & embeddings.held_out(imdb.doc_id) \
        & ~imdb.doc_id.isin(data.imdb_sample().doc_id)
    assert drawn.doc_id.isin(imdb.doc_id[unseen]).all()
    others = imdb.text[~unseen].tolist() + data.load_movie_reviews().text.tolist()
    nearest = overlap.train_test_overlap(others, drawn.text.tolist(), progress=False, use_cache=False)
    assert (nearest.similarity < overlap.NEAR_DUPLICATE).all(), nearest.similarity.max()
    assert overlap.similar_pairs(drawn.text.tolist()).empty
