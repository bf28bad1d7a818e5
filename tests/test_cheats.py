"""A hostile class's attacks on notebook 01 (issue K27): each fails its exercise or is flagged.

The attacks run as exercise answers in a real graded kernel (``grading_harness``, the engine
behind ``kit grade``); the flags are read from the code as ``kit grade`` reads it. Hidden checks
run in the grader, so what the student's code does in its kernel reaches none of them.
"""

from __future__ import annotations

import grading_harness
import nbformat
import pytest

from helpers.course.config import SOLUTIONS_DIR, notebooks_in
from helpers.course.engine import flags
from helpers.course.engine.verdict import DIFFERS, SHOWN_TEXTS
from helpers.course.notebook.cells import exercise_id, is_hidden

pytestmark = [pytest.mark.kernel, pytest.mark.slow]

#: A wrong nb_fit (no smoothing of the denominator), the base of the attacks that forge a pass.
WRONG_FIT = '''


def wrong_fit(X, y, alpha):
    classes = np.unique(y)
    log_prior = np.log([np.mean(y == c) for c in classes])
    counts = np.vstack([np.asarray(X[y == c].sum(axis=0)).ravel() for c in classes]) + alpha
    return {"classes": classes, "log_prior": log_prior,
            "log_likelihood": np.log(counts) - np.log(counts.sum(axis=1, keepdims=True) - alpha)}'''

CHEATS = {
    "1.1": {
        # the reference taken from the notebook's names, where K22's visible check left it
        "vars()": '''
def nb_fit(X, y, alpha=1.0):
    kit = vars()["NaiveBayes"](alpha=alpha).fit(X, y) if "NaiveBayes" in vars() else \\
        globals()["NaiveBayes"](alpha=alpha).fit(X, y)
    return {"classes": kit.classes_, "log_prior": kit.class_log_prior_,
            "log_likelihood": kit.feature_log_prob_}''',
        # the reference module under another name, the class by a string
        "getattr": '''
import helpers.naive_bayes as m


def nb_fit(X, y, alpha=1.0):
    kit = getattr(m, "Naive" "Bayes")(alpha=alpha).fit(X, y)
    return {"classes": kit.classes_, "log_prior": kit.class_log_prior_,
            "log_likelihood": kit.feature_log_prob_}''',
        # an array whose comparisons always agree: np.allclose in the visible check says True
        "__array_function__": '''
class Agreeable(np.ndarray):
    def __array_function__(self, func, types, args, kwargs):
        return True


def nb_fit(X, y, alpha=1.0):
    wrong = wrong_fit(X, y, alpha)
    return {**wrong, "log_likelihood": wrong["log_likelihood"].view(Agreeable)}''' + WRONG_FIT,
        # np.allclose patched, as K22's finalizer did once it had switched the guard off
        "np.allclose patched": '''
np.allclose = lambda *args, **kwargs: True


def nb_fit(X, y, alpha=1.0):
    return wrong_fit(X, y, alpha)''' + WRONG_FIT,
        # a finalizer that reads every frame on the stack whenever it is collected
        "finalizer": '''
import sys

SEEN = []


class Spy:
    def __del__(self):
        frame = sys._getframe(1)
        while frame is not None:
            SEEN.append(repr(frame.f_locals)[:5000])
            frame = frame.f_back


def nb_fit(X, y, alpha=1.0):
    Spy()
    classes = np.unique(y)
    log_prior = np.log([np.mean(y == c) for c in classes])
    counts = np.vstack([np.asarray(X[y == c].sum(axis=0)).ravel() for c in classes]) + alpha
    log_likelihood = np.log(counts) - np.log(counts.sum(axis=1, keepdims=True))
    if X.shape[0] < 100:  # a hidden check's input: show what the stack held
        raise ValueError(" | ".join(SEEN))
    return {"classes": classes, "log_prior": log_prior, "log_likelihood": log_likelihood}''',
    },
    "1.2": {
        # print replaced by a callable object (no function) that rewrites False into True
        "print object": '''
import builtins
import sys


class Rewriter:
    def __call__(self, *args, **kwargs):
        sys.stdout.write(" ".join(str(a) for a in args).replace("False", "True") + "\\n")


builtins.print = Rewriter()


def nb_predict(model, X):
    scores = np.asarray(X @ model["log_likelihood"].T)
    return model["classes"][np.argmax(scores, axis=1)]''',
    },
}
#: What each must get: failed (by a check), flagged, or both.
EXPECTED = {"vars()": {"failed", "flagged"}, "getattr": {"flagged"}, "__array_function__": {"failed"},
            "np.allclose patched": {"failed", "flagged"}, "finalizer": {"failed", "flagged"},
            "print object": {"failed", "flagged"}}


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> dict:
    solution = nbformat.read(notebooks_in(SOLUTIONS_DIR, ["01"])[0], as_version=4)
    answers = {ex: list(cheats.values()) for ex, cheats in CHEATS.items()}
    results = grading_harness.grade_variants(solution, answers, tmp_path_factory.mktemp("cheats"))
    cells = {exercise_id(c): c for c in solution.cells if exercise_id(c)}
    printed = "".join(o.get("text", "") for c in solution.cells for o in c.get("outputs", []))
    hidden = [line.strip() for c in solution.cells if is_hidden(c) for line in c.source.splitlines()
              if len(line.strip()) > 20]
    found = {}
    for ex, cheats in CHEATS.items():
        for (name, source), run in zip(cheats.items(), results[ex], strict=True):
            reasons = flags.code_flags(source, flags.reference_names(cells[ex]), printed, cells[ex].source)
            found[name] = (run[ex], reasons)
    return found, hidden


@pytest.mark.parametrize("name", list(EXPECTED))
def test_each_attack_fails_or_is_flagged(graded, name):
    found, _ = graded
    verdict, reasons = found[name]
    got = {"failed"} if not verdict.passed else set()
    got |= {"flagged"} if reasons else set()
    assert EXPECTED[name] <= got, (name, verdict, reasons)


def test_a_wrong_answer_dressed_to_pass_the_visible_check_is_failed_by_a_hidden_one(graded):
    found, _ = graded
    for name in ("__array_function__", "np.allclose patched", "print object"):
        verdict = found[name][0]
        assert verdict.hidden and verdict.reason.startswith(f"{DIFFERS} (a hidden"), name


def test_no_text_of_a_hidden_check_reaches_the_attacker(graded):
    found, hidden = graded
    for name, (verdict, _) in found.items():
        shown = " ".join(str(getattr(verdict, text)) for text in SHOWN_TEXTS)
        assert not any(line in shown for line in hidden), name
        assert "secret_rng" not in shown and "hidden.py" not in shown, name
