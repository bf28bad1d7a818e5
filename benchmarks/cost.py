"""What a piece of work costs, measured honestly: each run in a fresh process, in alternated rounds.

A benchmark script that uses this module has two sides:

- the *parent* (``compare``) runs every contender ``warmup`` rounds untimed and then
  ``repeats`` rounds, each run in a fresh child process (``python SCRIPT --child CONTENDER
  ARGS...``), alternating which contender goes first (ABBA…), so that a machine loaded by
  others, a warm file cache or a drifting clock slows every contender alike;
- the *child* (``report``) prepares its inputs (loading data is not counted), then measures
  one call of the work: wall time, CPU time (user + system of every thread of the process,
  and of child processes it waited for), and the peak resident memory of the work itself
  (the peak above the resident size before the work: on Linux the kernel's own high-water
  mark, reset through /proc/self/clear_refs; elsewhere the kit's sampler,
  ``helpers.course.memory``, counts it every 10 ms), and prints them with a digest of the
  result as one JSON line.

The parent asserts that every contender's results are the same (by digest, or by a check the
script gives) and prints one parseable line per comparison (``result_line``)::

    RESULT name=overlap-1gram kit_s=8.1 kit_iqr=0.3 peer=sklearn-chunked peer_s=21 peer_iqr=0.9
    ratio=2.6 kit_cpu_s=15 peer_cpu_s=21 cpu_ratio=1.4 kit_mb=310 peer_mb=900 equal=yes repeats=5

``ratio`` is the peer's median wall time over the kit's (above 1: the kit is faster),
``cpu_ratio`` the same for CPU time; times are medians, ``*_iqr`` their interquartile ranges.
"""

from __future__ import annotations

import ctypes
import gc
import hashlib
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import psutil

MIN_REPEATS = 5
SAMPLE_SECONDS = 0.01
CLEAR_REFS = Path("/proc/self/clear_refs")
STATUS = Path("/proc/self/status")


# --------------------------------------------------------------------------- the child's side


def cpu_seconds() -> float:
    """User + system CPU time of this process (all its threads) and of its waited-for children."""
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


def status_kb(field: str) -> int:
    """A field of /proc/self/status, in kB (VmRSS: resident now; VmHWM: the peak)."""
    for line in STATUS.read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"{STATUS} has no {field}")


def release_free_memory() -> None:
    """Collect garbage and hand free heap memory back to the system (glibc's malloc_trim)."""
    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def _resettable_peak() -> bool:
    try:
        CLEAR_REFS.write_text("5")  # 5: reset the peak resident size (VmHWM) to the current one
        return True
    except OSError:
        return False


def measure(work: Callable[[], object]) -> tuple[object, dict]:
    """Run ``work()`` once; return its result and ``wall_s``, ``cpu_s``, ``work_mb``, ``peak_method``.

    Free memory the process kept from loading (garbage, malloc's free lists) is handed back
    first, so that the work cannot reuse it without its peak showing.
    """
    release_free_memory()
    me = psutil.Process()
    if _resettable_peak():
        baseline = me.memory_info().rss
        start, cpu = time.perf_counter(), cpu_seconds()
        result = work()
        wall, cpu = time.perf_counter() - start, cpu_seconds() - cpu
        peak, method = status_kb("VmHWM") * 1024, "VmHWM"
    else:  # counted as the sampler counts, before and during the work
        # imported here: helpers sets the reference BLAS kernels, which a peer must not inherit
        from helpers.course import memory

        baseline = memory.held([me])
        with memory.PeakSampler(lambda: [me], interval=SAMPLE_SECONDS) as sampler:
            start, cpu = time.perf_counter(), cpu_seconds()
            result = work()
            wall, cpu = time.perf_counter() - start, cpu_seconds() - cpu
        peak, method = sampler.peak_bytes, "sampled"
    return result, {"wall_s": wall, "cpu_s": cpu, "work_mb": max(peak - baseline, 0) / 2**20,
                    "peak_method": method}


def peak_mb() -> float:
    """This process's peak resident memory in MB (Linux; since ``measure`` last reset it, if it did)."""
    return status_kb("VmHWM") / 1024


def digest(*arrays) -> str:
    """sha256 of arrays' dtypes, shapes and bytes: equal digests, bit-identical results."""
    found = hashlib.sha256()
    for array in arrays:
        array = np.ascontiguousarray(array)
        found.update(f"{array.dtype.str}{array.shape}".encode())
        found.update(array.tobytes())
    return found.hexdigest()


def report(work: Callable[[], object], summarise: Callable[[object], dict]) -> None:
    """The child's side: measure ``work`` and print the costs and ``summarise(result)`` as JSON."""
    result, costs = measure(work)
    print(json.dumps({**costs, **summarise(result)}))


# --------------------------------------------------------------------------- the parent's side


@dataclass(frozen=True)
class Runs:
    """The measured runs of one contender (one dict per run, as its child printed it)."""

    runs: tuple[dict, ...]

    def values(self, field: str) -> list[float]:
        return [run[field] for run in self.runs]

    def median(self, field: str) -> float:
        return statistics.median(self.values(field))

    def iqr(self, field: str) -> float:
        """Interquartile range: the spread of the middle half of the repeats."""
        return iqr(self.values(field))


def iqr(values: Sequence[float]) -> float:
    """Interquartile range of repeated measurements: the spread of their middle half."""
    q1, _, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return q3 - q1


def summary_line(fields: dict) -> str:
    """One parseable line: ``RESULT key=value key=value ...`` (values without spaces)."""
    return "RESULT " + " ".join(f"{key}={value}" for key, value in fields.items())


def check_repeats(repeats: int) -> None:
    """Refuse fewer than ``MIN_REPEATS`` timed rounds: a median of fewer says little."""
    if repeats < MIN_REPEATS:
        raise ValueError(f"At least {MIN_REPEATS} repeats, not {repeats}.")


def round_order(contenders: Sequence[str], round_number: int) -> list[str]:
    """The contenders' order in a round: as given in even rounds, reversed in odd ones (ABBA...)."""
    return list(contenders) if round_number % 2 == 0 else list(reversed(contenders))


def run_child(script: str, contender: str, args: Sequence[str], env: dict | None = None) -> dict:
    """``python script --child contender args...`` in a fresh process; its last line, parsed."""
    env = {**os.environ, "PYTHONHASHSEED": "0", **(env or {})}
    done = subprocess.run([sys.executable, script, "--child", contender, *args], env=env,
                          capture_output=True, text=True, check=False)
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        raise RuntimeError(f"{contender} failed with status {done.returncode}:\n{done.stderr[-3000:]}")
    return json.loads(lines[-1])


def compare(script: str, contenders: Sequence[str], args: Sequence[str], repeats: int = MIN_REPEATS,
            warmup: int = 1, show: bool = True) -> dict[str, Runs]:
    """Run each contender ``warmup`` rounds untimed, then ``repeats`` rounds, alternating the order.

    Round r runs the contenders in order when r is even and reversed when it is odd (ABBA),
    each in a fresh process; the warm-up rounds are run the same way and thrown away.
    """
    check_repeats(repeats)
    found: dict[str, list[dict]] = {name: [] for name in contenders}
    for round_ in range(warmup + repeats):
        for name in round_order(contenders, round_):
            run = run_child(script, name, args)
            if show:
                kind = "warm-up" if round_ < warmup else f"round {round_ - warmup + 1}"
                print(f"  {kind:<8} {name:<18} wall {run['wall_s']:7.2f} s  cpu {run['cpu_s']:7.2f} s  "
                      f"work {run['work_mb']:6.0f} MB", flush=True)
            if round_ >= warmup:
                found[name].append(run)
    return {name: Runs(tuple(runs)) for name, runs in found.items()}


def same_digest(runs: dict[str, Runs]) -> bool:
    """Whether every run of every contender returned the same digest."""
    return len({run["digest"] for found in runs.values() for run in found.runs}) == 1


def result_line(name: str, kit: Runs, peer_name: str, peer: Runs, equal: bool, **extra: object) -> str:
    """The parseable summary of one comparison (seconds, MB; medians over the repeats)."""
    fields = {
        "name": name, "kit_s": f"{kit.median('wall_s'):.4g}", "kit_iqr": f"{kit.iqr('wall_s'):.2g}",
        "peer": peer_name, "peer_s": f"{peer.median('wall_s'):.4g}", "peer_iqr": f"{peer.iqr('wall_s'):.2g}",
        "ratio": f"{peer.median('wall_s') / kit.median('wall_s'):.3g}",
        "kit_cpu_s": f"{kit.median('cpu_s'):.4g}", "peer_cpu_s": f"{peer.median('cpu_s'):.4g}",
        "cpu_ratio": f"{peer.median('cpu_s') / kit.median('cpu_s'):.3g}",
        "kit_mb": f"{kit.median('work_mb'):.4g}", "peer_mb": f"{peer.median('work_mb'):.4g}",
        "equal": "yes" if equal else "no", "repeats": len(kit.runs), **extra,
    }
    return summary_line(fields)
