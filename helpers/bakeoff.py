"""The class bake-off, the student's side: the rules, what an entry must answer, a dry run.

An entry is notebook 10 (``BAKEOFF_NOTEBOOK``), handed in like the others. It builds the
student's best system and defines ``ENTRY(texts)``: a list of review texts in, one label
(``"pos"`` or ``"neg"``) per text out. The instructor scores every entry once, on reviews no
notebook shows (``kit bakeoff``). Before handing in, ``dry_run`` calls the entry the way the
bake-off will, on reviews the rules let a system train on, and says whether its answer would
be scored and how accurate it was there.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeGuard

from helpers import data
from helpers.errors import InputError
from helpers.significance import accuracy_interval
from helpers.validation import check_int

#: The notebook a student hands in to enter.
BAKEOFF_NOTEBOOK = "10_bakeoff.ipynb"
#: The function it must define.
ENTRY = "predict_sentiment"
LABELS = ("neg", "pos")
#: Reviews of IMDB's train split a dry run labels by default (half of each label).
DRY_RUN_SIZE = 1000
RULES = f"""\
A bake-off entry is notebook {BAKEOFF_NOTEBOOK}: it defines {ENTRY}(texts), a list of review
texts in and a list of the same length out, each label "pos" or "neg".
- Train only on the 2,000 reviews (data.load_movie_reviews), IMDB's train and unsup splits
  (data.load_imdb("train"), data.load_imdb("unsup")) and the kit's Doc2Vec models. Never on
  IMDB's test split, which holds the bake-off's films, nor on the deployment sample.
- Choose everything (features, C, epochs) by cross-validation on what you train on: the test
  reviews are scored once, by the instructor, and nobody sees them before.
- The notebook runs from top to bottom in the grading sandbox (no internet, no file of yours
  beside it, at most an hour in all and 20 minutes a cell by default), and then {ENTRY} is
  called once. The sandbox holds only the data above (and the kit's other NLTK corpora):
  code that reads IMDB's test split, the training corpora (embeddings.imdb_vectors) or the
  notebooks' tables stops there with an error."""


def as_labels(answer: object) -> object:
    """An entry's answer made JSON: a list of strings when it is a sequence (a list, tuple,
    array or Series), else a description of what it is (``{"returned": "dict"}``)."""
    if _described(answer):  # made so already (in the kernel, before it crossed to the grader)
        return answer
    if isinstance(answer, (str, bytes, dict)) or not hasattr(answer, "__iter__"):
        return {"returned": type(answer).__name__}
    items = answer.tolist() if hasattr(answer, "tolist") else list(answer)
    if not isinstance(items, list):  # a 0-d array: one value, not a sequence
        return {"returned": type(answer).__name__}
    return [str(item) if isinstance(item, str) else repr(item)[:40] for item in items]


def _described(answer: object) -> TypeGuard[dict[str, str]]:
    """Whether ``answer`` is ``as_labels``' description of an answer that is not a sequence."""
    return type(answer) is dict and set(answer) == {"returned"} and type(answer["returned"]) is str


def checked_labels(answer: object, n: int) -> tuple[tuple[str, ...] | None, str]:
    """``(labels, "")`` when ``answer`` (``as_labels``' output) holds ``n`` labels, each
    ``pos`` or ``neg``; else ``(None, why it cannot be scored)``."""
    if not isinstance(answer, list):
        kind = answer["returned"] if _described(answer) else type(answer).__name__
        return None, f"{ENTRY} returned a {kind}, not a list of labels"
    if len(answer) != n:
        return None, f"{ENTRY} returned {len(answer)} label{'s' * (len(answer) != 1)} for {n} reviews"
    others = sorted({str(label) for label in answer} - set(LABELS))
    if others:
        shown = ", ".join(repr(label) for label in others[:3])
        return None, f"{ENTRY} returned labels other than 'pos' and 'neg' ({shown})"
    return tuple(answer), ""


@dataclass(frozen=True)
class DryRun:
    """How an entry did on a dry run: accuracy with its Wilson 95 % interval, on ``n`` reviews."""

    accuracy: float
    low: float
    high: float
    n: int

    def __str__(self) -> str:
        return (f"dry run on {self.n:,} IMDB train reviews: accuracy {100 * self.accuracy:.1f} % "
                f"(95 % interval {100 * self.low:.1f} to {100 * self.high:.1f})")


def dry_run(predict: Callable, n: int = DRY_RUN_SIZE, seed: int = 0) -> DryRun:
    """Call ``predict`` as the bake-off will, on ``n`` seeded IMDB train reviews, and score it.

    The reviews are ones the rules let a system train on, so this checks that the entry
    answers in a form the bake-off scores; its accuracy is an estimate of the bake-off's only
    for a system that did not train on IMDB's train split.

    Raises
    ------
    InputError
        If ``predict`` is not callable, ``n`` is not an even number from 2 to 25,000, or the
        answer could not be scored (the line says why, as the bake-off would).
    """
    if not callable(predict):
        raise InputError(f"predict must be your {ENTRY} function, not {type(predict).__name__}.")
    check_int(n, "n", 2, 25_000)
    if n % 2:
        raise InputError(f"n must be even (half the reviews of each label), not {n}.")
    reviews = data.load_imdb("train").groupby("label", group_keys=False).sample(n // 2, random_state=seed)
    labels, problem = checked_labels(as_labels(predict(reviews.text.tolist())), n)
    if labels is None:
        raise InputError(f"The bake-off could not score this entry: {problem}.")
    accuracy, low, high = accuracy_interval([label == truth for label, truth in zip(labels, reviews.label,
                                                                                      strict=True)])
    return DryRun(accuracy, low, high, n)
