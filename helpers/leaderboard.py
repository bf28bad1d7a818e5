"""One ranked table of systems scored on the same items, every pair tested.

Each system gets its accuracy with a Wilson 95 % interval; every pair of systems gets a paired
permutation test (``significance.permutation_test``, R = 5000, seed 0) on the items both
classified, Holm-adjusted over all the pairs at once (``significance.holm``). A rank then says
only what the tests show::

    rank(s) = 1 + the number of systems significantly more accurate than s

(a pair is significant where its Holm-adjusted p is below the course's α). Systems that no
other system beats significantly share rank 1, the best included: a rank is not a position
in a sorted list, and two systems with one rank were not told apart.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from itertools import combinations

import numpy as np
import pandas as pd

from helpers import settings
from helpers.errors import InputError
from helpers.significance import accuracy_interval, holm, permutation_test
from helpers.validation import check_binary, check_int, check_number

#: The permutation test's resamples, as everywhere in the course.
N_RESAMPLES = 5000


@dataclass(frozen=True)
class Leaderboard:
    """A leaderboard's two tables.

    ``table``: one row per system, best rank first (then accuracy): rank, system, accuracy,
    low and high (Wilson 95 %), n, and ``beats`` (the systems it is significantly more accurate
    than, comma-separated). ``pairs``: one row per pair: a, b, acc_a, acc_b, difference
    (acc_a − acc_b), p (paired permutation test), holm_p, significant (holm_p < alpha).
    """

    table: pd.DataFrame
    pairs: pd.DataFrame
    alpha: float


def leaderboard(correct: Mapping[str, np.ndarray], alpha: float | None = None,
                n_resamples: int = N_RESAMPLES, seed: int = 0) -> Leaderboard:
    """Rank systems by their per-item correctness on the same items.

    Parameters
    ----------
    correct : mapping
        System name -> True/False (or 0/1) per item, every system on the same items in the
        same order; at least two systems.
    alpha : float, optional
        The level of the tests (default: the course's, ``settings.alpha()``).
    n_resamples, seed
        The permutation tests' resamples and seed (the same for every pair).

    Returns
    -------
    Leaderboard

    Raises
    ------
    InputError
        Fewer than two systems; a name not a non-empty string; correctness not 1-D True/False
        or 0/1, or of different lengths; ``alpha`` not in (0, 1); ``n_resamples`` < 1; ``seed`` < 0.
    """
    outcomes = _checked(correct)
    alpha = settings.alpha() if alpha is None else check_number(alpha, "alpha", 0, 1, low_open=True,
                                                                  high_open=True)
    check_int(n_resamples, "n_resamples")
    check_int(seed, "seed", minimum=0)
    pairs = pd.DataFrame([_pair(a, b, outcomes, n_resamples, seed) for a, b in combinations(outcomes, 2)])
    pairs["holm_p"] = holm(pairs.p.to_numpy())
    pairs["significant"] = pairs.holm_p < alpha
    wins = significant_wins(pairs)
    rows = []
    for name, right in outcomes.items():
        accuracy, low, high = accuracy_interval(right)
        beaten = [loser for winner, loser in wins if winner == name]
        rows.append({"system": name, "accuracy": accuracy, "low": low, "high": high, "n": len(right),
                     "beats": ", ".join(beaten)})
    table = pd.DataFrame(rows)
    table.insert(0, "rank", ranks(list(outcomes), wins))
    table = table.sort_values(["rank", "accuracy"], ascending=[True, False], kind="stable")
    return Leaderboard(table.reset_index(drop=True), pairs, alpha)


def ranks(systems: list[str], wins: list[tuple[str, str]]) -> list[int]:
    """Each system's rank: 1 + the number of systems that beat it (``wins``: (winner, loser)).

    Raises
    ------
    InputError
        If a win names a system not in ``systems``, or a system beats itself.
    """
    known = set(systems)
    for winner, loser in wins:
        if winner not in known or loser not in known or winner == loser:
            raise InputError(f"a win must be of one listed system over another, not {winner!r} "
                             f"over {loser!r}.")
    beaten_by = {name: {winner for winner, loser in wins if loser == name} for name in systems}
    return [1 + len(beaten_by[name]) for name in systems]


def significant_wins(pairs: pd.DataFrame) -> list[tuple[str, str]]:
    """(winner, loser) for every significant pair: the more accurate system first."""
    return [(row.a, row.b) if row.difference > 0 else (row.b, row.a)
            for row in pairs.itertuples() if row.significant]


def describe(board: Leaderboard) -> str:
    """The leaderboard as text: the ranked table, then every pair."""
    interval = {col: (100 * board.table[col]).map("{:.1f}".format) for col in ("low", "high")}
    table = board.table.assign(accuracy=(100 * board.table.accuracy).map("{:.2f}".format), **interval)
    pairs = board.pairs.assign(difference=(100 * board.pairs.difference).map("{:+.1f}".format),
                               p=board.pairs.p.map("{:.3g}".format),
                               holm_p=board.pairs.holm_p.map("{:.3g}".format))
    return "\n".join([
        f"rank = 1 + the number of systems significantly more accurate (paired permutation test, "
        f"Holm over {len(board.pairs)} pairs, α = {board.alpha:g}); accuracy and Wilson 95 % interval in %",
        table.to_string(index=False), "",
        pairs[["a", "b", "difference", "p", "holm_p", "significant"]].to_string(index=False)])


def plot(board: Leaderboard, ax=None):
    """Accuracy with its interval per system, best rank on top, each labelled with its rank and
    the systems it beats; returns the axes."""
    import matplotlib.pyplot as plt

    ax = ax or plt.subplots(figsize=(7, 0.5 + 0.45 * len(board.table)))[1]
    table = board.table.iloc[::-1]
    y = np.arange(len(table))
    below, above = 100 * (table.accuracy - table.low), 100 * (table.high - table.accuracy)
    ax.errorbar(100 * table.accuracy, y, xerr=[below, above], fmt="o", capsize=3, color="tab:blue")
    # names are shown as they are: a "$" in one is not the start of mathematics
    ax.set_yticks(y, [f"{row.rank}. {row.system}" for row in table.itertuples()], parse_math=False)
    for k, row in zip(y, table.itertuples(), strict=True):
        if row.beats:
            ax.annotate(f"beats {row.beats}", (100 * row.high, k), xytext=(4, 0), textcoords="offset points",
                        va="center", fontsize=8, parse_math=False)
    ax.set(xlabel="accuracy (%), Wilson 95 % interval",
           title=f"Ranks: 1 + systems significantly better (Holm, α = {board.alpha:g})")
    ax.margins(x=0.25)
    return ax


def _checked(correct: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    if not isinstance(correct, Mapping) or len(correct) < 2:
        raise InputError("correct must map at least two system names to their per-item correctness.")
    outcomes = {}
    for name, right in correct.items():
        if not isinstance(name, str) or not name:
            raise InputError(f"system names must be non-empty strings, not {name!r}.")
        outcomes[name] = check_binary(right, f"correct[{name!r}]")
    lengths = {len(right) for right in outcomes.values()}
    if len(lengths) > 1:
        raise InputError(f"every system must be scored on the same items; lengths differ: {sorted(lengths)}.")
    return outcomes


def _pair(a: str, b: str, outcomes: Mapping[str, np.ndarray], n_resamples: int, seed: int) -> dict:
    right_a, right_b = outcomes[a].astype(float), outcomes[b].astype(float)
    test = permutation_test(right_a, right_b, n_resamples=n_resamples, seed=seed)
    return {"a": a, "b": b, "acc_a": right_a.mean(), "acc_b": right_b.mean(),
            "difference": right_a.mean() - right_b.mean(), "p": test.p_value}
