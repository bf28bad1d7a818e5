"""Run a Python snippet in a child process and measure its peak resident memory.

Shared by the benchmarks: each measured run gets a process of its own, so peak memory is
per run. The snippet must print one JSON object as its last line of output.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import psutil


def run_child(code: str, *args: str, interval: float = 0.1) -> dict:
    """Run ``python -c code args…``; return its JSON report plus ``peak_gb`` (RSS, incl. children)."""
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    child = subprocess.Popen([sys.executable, "-c", code, *args], stdout=subprocess.PIPE,
                             text=True, env=env)
    watched, peak = psutil.Process(child.pid), 0
    while child.poll() is None:
        try:
            processes = [watched, *watched.children(recursive=True)]
            peak = max(peak, sum(p.memory_info().rss for p in processes))
        except psutil.Error:
            pass
        time.sleep(interval)
    output = child.stdout.read().strip().splitlines()
    if child.returncode != 0 or not output:
        raise RuntimeError(f"benchmark child failed with status {child.returncode}")
    return {**json.loads(output[-1]), "peak_gb": peak / 2**30}
