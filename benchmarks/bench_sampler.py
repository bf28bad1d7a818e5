"""The memory sampler's own cost: an exact count at every sample against the kit's gated one.

``kit run``, the grading sandbox and the benchmarks watch a notebook's kernel with
``helpers.course.memory.PeakSampler``, five samples a second. An exact count (PSS) walks every
page table of the group; the kit reads cheap counters each time and counts exactly only when
that could change the answer (a possible new peak, a limit, or every ``EXACT_SECONDS``).

Workload: a process holding ``--mb`` MB (touched) that starts two workers holding a third of
that each (spawned, as joblib's are), all idle: a notebook's kernel and its workers between
two cells. Contenders, given the same processes for the same ``--seconds`` window each:

- ``exact``: ``PeakSampler(..., exact_above=0)``, which counts exactly at every sample;
- ``kit``: ``PeakSampler(...)``, the gated count.

Measured: CPU seconds this process spent in the window (the sampling thread; the main thread
sleeps), in ``--repeats`` rounds in turns, each reversing the last; median and interquartile
range. Outputs asserted equal: the peaks, to ``EXACT_MARGIN`` (the gated count may miss a
rise smaller than that; this workload holds still).

    python benchmarks/bench_sampler.py [--mb 600 --seconds 5 --repeats 5]
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import time

from cost import MIN_REPEATS, check_repeats, iqr, round_order, summary_line

from helpers.course import memory

#: A worker: holds argv[1] MB (touched), says "ready", waits to be killed.
WORKER = """
import sys, time
block = bytearray(int(sys.argv[1]) * 2**20)
for i in range(0, len(block), 4096):
    block[i] = 1
print("ready", flush=True)
time.sleep(3600)
"""
#: The main process: starts two workers (argv[2] their code) of argv[1] // 3 MB each, holds
#: argv[1] MB itself, says "ready" once all hold theirs, waits to be killed.
MAIN = """
import subprocess, sys, time
mb = int(sys.argv[1])
workers = [subprocess.Popen([sys.executable, "-c", sys.argv[2], str(mb // 3)], stdout=subprocess.PIPE,
                            text=True) for _ in range(2)]
block = bytearray(mb * 2**20)
for i in range(0, len(block), 4096):
    block[i] = 1
for worker in workers:
    worker.stdout.readline()
print("ready", flush=True)
time.sleep(3600)
"""


class Workload:
    """The processes the contenders sample: ``MAIN`` and its two workers, holding still."""

    def __init__(self, mb: int) -> None:
        self.main = subprocess.Popen([sys.executable, "-c", MAIN, str(mb), WORKER], stdout=subprocess.PIPE,
                                     text=True)
        if self.main.stdout.readline().strip() != "ready":
            raise RuntimeError("the workload did not start")
        self.processes = memory.tree(self.main.pid)

    def end(self) -> None:
        for process in self.processes():
            process.kill()
        self.main.wait()


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def sampled(processes: memory.Processes, seconds: float, exact_above: int | None) -> tuple[float, int, int]:
    """CPU seconds this process spent sampling for ``seconds``, the peak, and the exact counts."""
    start = _cpu()
    with memory.PeakSampler(processes, exact_above=exact_above) as sampler:
        time.sleep(seconds)
    return _cpu() - start, sampler.peak_bytes, sampler.exact_counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=600, help="what the workload's main process holds")
    parser.add_argument("--seconds", type=float, default=5.0, help="the sampling window of each run")
    parser.add_argument("--repeats", type=int, default=MIN_REPEATS)
    args = parser.parse_args()
    check_repeats(args.repeats)
    workload = Workload(args.mb)
    try:
        contenders = {"kit": None, "exact": 0}
        runs: dict[str, list[tuple[float, int, int]]] = {name: [] for name in contenders}
        for round_number in range(args.repeats):
            for name in round_order(list(contenders), round_number):
                runs[name].append(sampled(workload.processes, args.seconds, contenders[name]))
    finally:
        workload.end()
    cpu = {name: [run[0] for run in found] for name, found in runs.items()}
    peaks = {name: max(run[1] for run in found) for name, found in runs.items()}
    equal = abs(peaks["kit"] - peaks["exact"]) <= memory.EXACT_MARGIN
    for name in contenders:
        exact = statistics.median(run[2] for run in runs[name])
        print(f"{name:>5}: {statistics.median(cpu[name]):.3f} CPU-s per {args.seconds:g} s window "
              f"(IQR {iqr(cpu[name]):.3f}), peak {peaks[name] / 2**20:.0f} MB, {exact:.0f} exact counts")
    kit, exact = statistics.median(cpu["kit"]), statistics.median(cpu["exact"])
    print(summary_line({"name": "sampler", "kit_s": f"{kit:.4g}", "kit_iqr": f"{iqr(cpu['kit']):.2g}",
                        "peer": "exact", "peer_s": f"{exact:.4g}", "peer_iqr": f"{iqr(cpu['exact']):.2g}",
                        "ratio": f"{exact / kit:.3g}",
                        "equal": "yes" if equal else "no", "repeats": args.repeats,
                        "mb": args.mb, "seconds": args.seconds}))
    assert equal, f"the peaks differ by more than EXACT_MARGIN: {peaks}"


if __name__ == "__main__":
    sys.exit(main())
