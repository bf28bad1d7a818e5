"""Paired permutation test: the kit's against scipy's and mlxtend's, on its two paths.

Two cases, n = 2,000 paired scores each, R = 5,000 resamples, statistic |mean(a) - mean(b)|
(two-sided), chosen so that p is near 0.1, not at its floor 1 / (R + 1) where every test
prints the same number whatever it does:

- ``01``: 0/1 correctness shaped like two classifiers on the 2,000 reviews (A alone right
  on 160 items, B alone on 190, both right on 80 % of the rest). The kit's 0/1 path: the
  number of swapped pairs is drawn as one binomial per resample.
- ``real``: real-valued per-item scores (e.g. a per-item loss): a uniform on [0, 1], b = a
  plus Normal(0.006, 0.15) noise. The kit's general path: a coin per item per resample, one
  matrix product per chunk of resamples.

Contenders, given the same arrays: ``helpers.significance.permutation_test``;
``scipy.stats.permutation_test`` (permutation_type="samples", vectorized, alternative
"greater" on the absolute difference); ``mlxtend.evaluate.permutation_test``
(method="approximate", paired=True). All three count the observed statistic among the
resamples, p = (s + 1) / (R + 1).

Outputs asserted equal: the statistic (kit vs scipy, to 1e-12 relative), and each peer's
p-value within 4 Monte Carlo standard errors of the kit's: the two are independent
estimates of the same p, so their difference has standard error sqrt(2 p (1 - p) / R).

Time: one warm-up call each, then ``--repeats`` rounds in turns, each round reversing the
last (kit, scipy, mlxtend, mlxtend, scipy, kit, ...); median and interquartile range.
Memory: peak resident memory of one call above the baseline after loading the inputs, one
fresh process per contender and case, and the peak traced by tracemalloc
(``measure.memory_in_child``).
Also prints how the kit's 0/1 path scales with n (2,000 to 200,000 items, calls back to back).

On the general path the kit needs more memory than mlxtend, whose Python loop holds two
arrays of n: it draws up to 4 M swap indicators at a time (``CHUNK_CELLS``; about 36 MB as
float64 for the matrix product, whatever n and R). Kept: that is what makes it 60x faster.

    python benchmarks/bench_permutation.py [--resamples 5000 --repeats 5] [--skip-scaling]
"""

from __future__ import annotations

import argparse
import math
import time
from functools import partial

import numpy as np
from measure import Timing, alternate, load_inputs, memory_in_child, report_memory, result_line
from mlxtend.evaluate import permutation_test as mlxtend_permutation_test
from scipy.stats import permutation_test as scipy_permutation_test

from helpers.significance import permutation_test

N = 2000
A_ALONE, B_ALONE, BOTH_RIGHT = 160, 190, 0.8  # the 0/1 case's discordant items
REAL_SHIFT, REAL_NOISE = 0.006, 0.15  # the real case: b = a + Normal(shift, noise)
MC_ERRORS = 4  # |p_kit - p_peer| allowed, in standard errors of the difference
STATISTIC_RTOL = 1e-12
SCALING_SIZES = (2_000, 25_000, 50_000, 100_000, 200_000)
SEED = 0


def zero_one_scores(n: int = N, a_alone: int = A_ALONE, b_alone: int = B_ALONE,
                    seed: int = SEED) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    order = rng.permutation(n)
    a, b = np.zeros(n), np.zeros(n)
    a[order[:a_alone]] = 1
    b[order[a_alone:a_alone + b_alone]] = 1
    rest = order[a_alone + b_alone:]
    both = rest[rng.random(len(rest)) < BOTH_RIGHT]
    a[both] = b[both] = 1
    return a, b


def real_scores(seed: int = SEED) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    a = rng.random(N)
    return a, a + rng.normal(REAL_SHIFT, REAL_NOISE, N)


CASES = {"01": zero_one_scores, "real": real_scores}


def kit(a, b, resamples):
    result = permutation_test(a, b, n_resamples=resamples, seed=SEED)
    return result.statistic, result.p_value


def scipy(a, b, resamples):
    def abs_mean_difference(x, y, axis):
        return np.abs(np.mean(x, axis=axis) - np.mean(y, axis=axis))

    result = scipy_permutation_test((a, b), abs_mean_difference, permutation_type="samples",
                                    vectorized=True, n_resamples=resamples, alternative="greater",
                                    random_state=SEED)
    return float(result.statistic), float(result.pvalue)


def mlxtend(a, b, resamples):
    p = mlxtend_permutation_test(a, b, func="x_mean != y_mean", method="approximate",
                                 num_rounds=resamples, seed=SEED, paired=True)
    return None, float(p)


CONTENDERS = {"kit": kit, "scipy": scipy, "mlxtend": mlxtend}


def agree(kit_output, peer_output, resamples: int) -> tuple[bool, float]:
    """Whether a peer's (statistic, p) matches the kit's, and the p tolerance used."""
    (statistic, p_kit), (peer_statistic, p_peer) = kit_output, peer_output
    p = (p_kit + p_peer) / 2
    tolerance = MC_ERRORS * math.sqrt(2 * p * (1 - p) / resamples)
    same_statistic = peer_statistic is None or math.isclose(statistic, peer_statistic,
                                                            rel_tol=STATISTIC_RTOL)
    return same_statistic and abs(p_kit - p_peer) <= tolerance, tolerance


def scaling() -> None:
    """The kit's 0/1 path from 2,000 to 200,000 items (same discordant share), back to back, median of 9."""
    line = []
    for n in SCALING_SIZES:
        a, b = zero_one_scores(n, n * A_ALONE // N, n * B_ALONE // N)
        permutation_test(a, b, seed=SEED)
        times = []
        for _ in range(9):
            start = time.perf_counter()
            permutation_test(a, b, seed=SEED)
            times.append(time.perf_counter() - start)
        line.append(f"n{n}_ms={1000 * float(np.median(times)):.3g}")
    print("SCALING name=perm-01-kit " + " ".join(line))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--resamples", type=int, default=5000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--skip-scaling", action="store_true")
    parser.add_argument("--memory", choices=list(CONTENDERS), help=argparse.SUPPRESS)
    parser.add_argument("--inputs", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.memory:  # child process of memory_in_child
        report_memory(partial(CONTENDERS[args.memory], *load_inputs(args.inputs), args.resamples))
        return

    for case, make in CASES.items():
        a, b = make()
        runs: dict[str, Timing] = alternate({name: partial(f, a, b, args.resamples)
                                             for name, f in CONTENDERS.items()}, args.repeats)
        memory = {name: memory_in_child(__file__, name, (a, b), "--resamples", str(args.resamples))
                  for name in CONTENDERS}
        print(f"case {case}: n = {N}, R = {args.resamples}, mean(a) = {a.mean():.4f}, "
              f"mean(b) = {b.mean():.4f}")
        for name, run in runs.items():
            statistic, p = run.output
            print(f"  {name:<8} {run.median:9.4f} s (IQR {run.iqr:.2g})  {memory[name].rss_mb:8.1f} MB "
                  f"(traced {memory[name].traced_mb:.1f})  "
                  f"p = {p:.4f}" + (f"  statistic = {statistic:.6g}" if statistic is not None else ""))
        for peer in ("scipy", "mlxtend"):
            equal, tolerance = agree(runs["kit"].output, runs[peer].output, args.resamples)
            print(result_line(f"perm-{case}", runs["kit"], peer, runs[peer], memory["kit"],
                              memory[peer], equal, p_kit=f"{runs['kit'].output[1]:.4f}",
                              p_peer=f"{runs[peer].output[1]:.4f}", p_tol=f"{tolerance:.4f}"))
            assert equal, f"{peer} disagrees with the kit on case {case}"
    if not args.skip_scaling:
        scaling()


if __name__ == "__main__":
    main()
