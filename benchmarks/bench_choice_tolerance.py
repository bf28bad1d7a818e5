"""Screening the inner CV's candidates: the same choices of C at a fraction of the cost.

Every SVM system of the kit chooses C (and ``svm-bow`` its features) by inner CV on the
training folds. The kit scores every candidate with fits stopped at ``evaluation.CHOICE_TOL``
(1e-2) and again at ``evaluation.SVM_TOL`` (1e-4, scikit-learn's default) only those within
``evaluation.SCREEN_MARGIN`` of the best (``best_C``, ``FeatureChoice.choose`` with
``screen=True``); the contender ``strict`` scores every candidate at ``SVM_TOL`` (``screen=False``,
what the kit did before). Both choose, for each system and each outer fold given, from the same
training-fold features (built once, not timed); their choices (candidate and C per system and
fold) are asserted equal on every call of either. ``--repeats`` alternated rounds (strict, kit,
kit, strict, ...), one process, one core; wall time per contender and ``RESULT`` lines.

    python benchmarks/bench_choice_tolerance.py [--folds 0 1 ...] [--repeats 5]

Systems: the five settings of ``systems.SVM_FEATURES`` and ``svm-bow`` (the choice among
them). The default, fold 0 only, takes about 10 minutes on one core.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

import measure
import numpy as np
from cost import MIN_REPEATS, summary_line


def training_features(folds: list[int]) -> dict[tuple[str, int], tuple[object, object, np.ndarray]]:
    """(system, outer fold) -> (system, its training-fold features, their labels)."""
    from helpers import data, systems

    reviews = data.load_movie_reviews()
    labels = reviews.label.to_numpy()
    named = {**systems.SVM_FEATURES, "svm-bow": systems.system("svm-bow")}
    found = {}
    for name, system in named.items():
        matrix = system.represent(reviews)
        for fold in folds:
            train, test = np.flatnonzero(reviews.fold != fold), np.flatnonzero(reviews.fold == fold)
            found[(name, fold)] = (system, system.features(matrix, train, test)[0], labels[train])
    return found


def choices(features: dict, screen: bool) -> dict[tuple[str, int], tuple[int, float]]:
    """Each (system, fold)'s choice, (candidate position or -1, C), screened or not."""
    from helpers import evaluation

    found = {}
    for key, (system, X, y) in features.items():
        if isinstance(system, evaluation.FeatureChoice):
            found[key] = system.choose(X, y, screen)
        else:
            found[key] = (-1, evaluation.best_C(X, y, system.Cs, system.inner_folds, screen))
    return found


def recorded(call: Callable[[], object], outputs: list) -> Callable[[], object]:
    """``call``, keeping what each of its calls returned in ``outputs``."""
    def run() -> object:
        outputs.append(call())
        return outputs[-1]
    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--folds", type=int, nargs="+", default=[0], choices=range(10))
    parser.add_argument("--repeats", type=int, default=MIN_REPEATS)
    args = parser.parse_args()

    import warnings

    from sklearn.exceptions import ConvergenceWarning


    warnings.simplefilter("ignore", ConvergenceWarning)
    features = training_features(args.folds)
    outputs = {"strict": [], "kit": []}
    contenders = {"strict": recorded(lambda: choices(features, screen=False), outputs["strict"]),
                  "kit": recorded(lambda: choices(features, screen=True), outputs["kit"])}
    timed = measure.alternate(contenders, repeats=args.repeats, warmup=0)
    strict, kit = outputs["strict"][0], outputs["kit"][0]
    assert all(found == strict for found in outputs["strict"] + outputs["kit"]), (
        {key: (kit[key], strict[key]) for key in kit if kit[key] != strict[key]})
    for (name, fold), (candidate, C) in sorted(kit.items()):
        chosen = f"candidate {candidate}, " if candidate >= 0 else ""
        print(f"{name:<18} fold {fold}: {chosen}C = {C:g} (both)")
    print(summary_line({"name": "choice-screening", "folds": ",".join(map(str, args.folds)),
                        "kit_s": f"{timed['kit'].median:.2f}", "kit_iqr_s": f"{timed['kit'].iqr:.2f}",
                        "peer": "strict", "peer_s": f"{timed['strict'].median:.2f}",
                        "peer_iqr_s": f"{timed['strict'].iqr:.2f}",
                        "ratio": f"{timed['strict'].median / timed['kit'].median:.2f}", "equal": "yes"}))


if __name__ == "__main__":
    main()
