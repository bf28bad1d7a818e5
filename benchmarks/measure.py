"""Shared by the benchmarks: alternated timing, the memory a piece of work needs, one summary line.

- ``alternate``: time contenders in turns (kit, peer, peer, kit, ...) after a warm-up, so that
  a shared, loaded machine slows each of them alike; median and interquartile range.
- ``memory_in_child``: what one call needs, in a fresh process per contender that loads only
  the pickled inputs (through the benchmark script's own ``--memory CONTENDER`` mode): the
  peak resident memory above the baseline after loading (``work_memory_mb``; Linux, the
  peak is reset through /proc/self/clear_refs) and, as a cross-check, the peak traced by
  tracemalloc (``traced_memory_mb``).
- ``result_line``: ``RESULT name=... kit_s=... peer=... peer_s=... ratio=... kit_mb=...
  peer_mb=... equal=yes ...``, one per comparison (ratio = peer time / kit time: above 1
  the kit is faster; ``*_mb`` resident, ``*_traced_mb`` tracemalloc).
"""

from __future__ import annotations

import gc
import json
import os
import pickle
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from cost import MIN_REPEATS, check_repeats, iqr, release_free_memory, round_order, status_kb, summary_line


@dataclass(frozen=True)
class Timing:
    """Wall-clock seconds of the timed calls of one contender, and what its last call returned."""

    seconds: tuple[float, ...]
    output: object

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)

    @property
    def iqr(self) -> float:
        """Interquartile range (the spread of the middle half of the repeats)."""
        return iqr(self.seconds)


def alternate(contenders: dict[str, Callable[[], object]], repeats: int = MIN_REPEATS,
              warmup: int = 1) -> dict[str, Timing]:
    """Call each contender ``warmup`` times untimed, then ``repeats`` timed rounds in turns.

    Each round reverses the previous round's order (ABBA...), so that no contender always
    runs first (on a cold cache) or right after the other. Garbage is collected before every
    call (untimed), so that one contender's garbage is not collected on another's clock.
    """
    check_repeats(repeats)
    outputs = {}
    for _ in range(warmup):
        for name, call in contenders.items():
            gc.collect()
            outputs[name] = call()
    seconds = {name: [] for name in contenders}
    for round_number in range(repeats):
        for name in round_order(list(contenders), round_number):
            call = contenders[name]
            gc.collect()
            start = time.perf_counter()
            outputs[name] = call()
            seconds[name].append(time.perf_counter() - start)
    return {name: Timing(tuple(seconds[name]), outputs[name]) for name in contenders}


def work_memory_mb(work: Callable[[], object]) -> float:
    """Peak resident memory (MB) while ``work()`` runs, minus the resident memory before it.

    Linux only: writing 5 to /proc/self/clear_refs resets the peak (VmHWM) to the current
    resident size, so the peak read afterwards is the work's own, not the loading's. Memory
    the process freed before but kept (Python's and malloc's free lists) can be reused without
    showing, hence ``memory_in_child`` loads only the pickled inputs, which frees little.
    """
    release_free_memory()
    Path("/proc/self/clear_refs").write_text("5")
    baseline = status_kb("VmRSS")
    work()
    return (status_kb("VmHWM") - baseline) / 1024


def traced_memory_mb(work: Callable[[], object]) -> float:
    """Peak of the memory allocated through Python's allocators and numpy while ``work()``
    runs (tracemalloc), above what was allocated before: blind to memory that C code
    allocates by itself, but not fooled by reused free memory."""
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        work()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return (peak - before) / 2**20


@dataclass(frozen=True)
class Memory:
    """What one call of a contender needs, in MB: resident (peak above baseline) and traced."""

    rss_mb: float
    traced_mb: float


def memory_in_child(script: str, contender: str, inputs: object, *args: str) -> Memory:
    """Run ``python script --memory contender --inputs FILE args...`` in a fresh process.

    ``inputs`` are pickled to FILE; the child loads them (nothing else to free), measures one
    call of ``contender`` with ``work_memory_mb`` and then a second with ``traced_memory_mb``,
    and prints both as a JSON line (``report_memory``).
    """
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "inputs.pickle"
        with path.open("wb") as file:
            pickle.dump(inputs, file, protocol=pickle.HIGHEST_PROTOCOL)
        done = subprocess.run([sys.executable, script, "--memory", contender, "--inputs", str(path), *args],
                              env=env, capture_output=True, text=True, check=False)
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        raise RuntimeError(f"memory run of {contender} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return Memory(**json.loads(lines[-1]))


def load_inputs(path: str) -> object:
    """The child's side of ``memory_in_child``: the pickled inputs."""
    with open(path, "rb") as file:
        return pickle.load(file)


def report_memory(work: Callable[[], object]) -> None:
    """The child's side of ``memory_in_child``: measure ``work`` and print the JSON line."""
    rss = work_memory_mb(work)
    print(json.dumps({"rss_mb": rss, "traced_mb": traced_memory_mb(work)}))


def result_line(name: str, kit: Timing, peer_name: str, peer: Timing, kit_memory: Memory | None,
                peer_memory: Memory | None, equal: bool, **extra: object) -> str:
    """The parseable summary of one comparison (times in seconds, memory in MB; no memory
    fields where the memories are None: work whose memory was not measured on its own)."""
    fields = {"name": name, "kit_s": f"{kit.median:.4g}", "kit_iqr": f"{kit.iqr:.2g}",
              "peer": peer_name, "peer_s": f"{peer.median:.4g}", "peer_iqr": f"{peer.iqr:.2g}",
              "ratio": f"{peer.median / kit.median:.3g}"}
    if kit_memory is not None and peer_memory is not None:
        fields.update({"kit_mb": f"{kit_memory.rss_mb:.3g}", "peer_mb": f"{peer_memory.rss_mb:.3g}",
                       "kit_traced_mb": f"{kit_memory.traced_mb:.3g}",
                       "peer_traced_mb": f"{peer_memory.traced_mb:.3g}"})
    fields.update({"equal": "yes" if equal else "no", "repeats": len(kit.seconds), **extra})
    return summary_line(fields)
