"""The benchmarks' own machinery: what they measure must be what they say (no timing here)."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time

import numpy as np
import psutil
import pytest
from conftest import marked_processes

from helpers.settings import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT / "benchmarks"))

import bench_notebooks  # noqa: E402
import cost  # noqa: E402
import measure  # noqa: E402

MB = 2**20
#: The environment variable a benchmark's processes inherit, so that any left over is found.
MARK = "KIT_TEST_MARK"


def test_memory_cap_kills_a_notebook_run_that_needs_more():
    cap = bench_notebooks.Cap.create(f"kit-test-{os.getpid()}", 100 * MB)
    if cap.kind == "none":
        pytest.skip("this machine lets no process create a memory control group")
    touch_300_mb = "b = bytearray(300 * 2**20); b[::4096] = b'x' * len(b[::4096]); print('survived')"
    if not cap.holds_swap():
        cap.remove()
        pytest.skip("this machine swaps and its cgroups cannot cap swap: a capped run swaps, not dies")
    try:
        done, _, _ = bench_notebooks.run_capped([sys.executable, "-c", touch_300_mb], dict(os.environ), cap)
        assert done.returncode != 0 and "survived" not in done.stdout
        assert cap.oom_kills() >= 1
        assert cap.peak_mb() is None or cap.peak_mb() <= 100  # cgroup v2 before Linux 5.19 has no peak
        if psutil.swap_memory().total == 0:  # a memory + swap limit counts its hits elsewhere
            assert cap.limit_hits() >= 1
    finally:
        cap.remove()



def test_memory_cap_lets_a_small_run_finish():
    cap = bench_notebooks.Cap.create(f"kit-test-small-{os.getpid()}", 200 * MB)
    if cap.kind == "none":
        pytest.skip("this machine lets no process create a memory control group")
    try:
        done, _, cpu = bench_notebooks.run_capped([sys.executable, "-c", "print('finished')"],
                                                  dict(os.environ), cap)
        assert done.returncode == 0 and done.stdout.strip() == "finished"
        assert cap.oom_kills() == 0 and cpu > 0
    finally:
        cap.remove()


def test_summary_totals_the_notebooks_of_each_phase_not_the_fetch():
    rows = [{"phase": "cold", "notebook": "kit fetch", "wall_s": 20.0, "cpu_s": 20.0, "status": "ok"},
            {"phase": "cold", "notebook": "00_data", "wall_s": 4.0, "notebook_s": 3.0, "cpu_s": 5.0,
             "kernel_peak_mb": 200, "status": "ok"},
            {"phase": "cold", "notebook": "01_naive_bayes", "wall_s": 30.0, "notebook_s": 28.0, "cpu_s": 31.0,
             "kernel_peak_mb": 1200, "status": "ok"},
            {"phase": "warm", "notebook": "00_data", "wall_s": 2.0, "notebook_s": 1.5, "cpu_s": 2.5,
             "kernel_peak_mb": 210, "status": "ok"}]
    table = bench_notebooks.summary(rows).set_index(["phase", "notebook"])
    assert table.loc[("cold", "all notebooks"), "wall_s"] == 34.0
    assert table.loc[("cold", "all notebooks"), "cpu_s"] == 36.0
    assert table.loc[("warm", "all notebooks"), "notebook_s"] == 1.5
    assert "| cold | 01_naive_bayes | ok | 30.0 |" in bench_notebooks.markdown(table.reset_index())


def test_work_memory_counts_what_the_work_allocates_not_what_was_loaded():
    loaded = np.ones(40 * MB // 8)  # before the work: not the work's
    _, costs = cost.measure(lambda: np.ones(80 * MB // 8).sum())
    if costs["peak_method"] != "VmHWM":
        pytest.skip("no resettable peak here: sampling every 10 ms may miss a short-lived array")
    assert 60 < costs["work_mb"] < 200
    assert loaded.sum() > 0


def test_alternate_reverses_the_order_every_round():
    calls = []
    contenders = {"kit": lambda: calls.append("kit"), "peer": lambda: calls.append("peer")}
    measure.alternate(contenders, repeats=5, warmup=1)
    timed = calls[2:]
    assert timed == ["kit", "peer", "peer", "kit", "kit", "peer", "peer", "kit", "kit", "peer"]


def test_alternate_refuses_fewer_than_five_repeats():
    with pytest.raises(ValueError, match="At least 5"):
        measure.alternate({"kit": lambda: None}, repeats=4)


def test_result_line_is_key_value_pairs_and_leaves_out_memory_not_measured():
    kit, peer = measure.Timing((1.0, 1.0, 2.0, 2.0, 2.0), None), measure.Timing((4.0,) * 5, None)
    line = measure.result_line("x", kit, "peer", peer, None, None, True, extra="1")
    fields = dict(pair.split("=") for pair in line.removeprefix("RESULT ").split())
    assert fields["ratio"] == "2" and fields["equal"] == "yes" and fields["extra"] == "1"
    assert not any(key.endswith("_mb") for key in fields)
    memory = measure.Memory(rss_mb=12.0, traced_mb=10.0)
    fields = dict(pair.split("=") for pair in
                  measure.result_line("x", kit, "peer", peer, memory, memory, False).split()[1:])
    assert fields["kit_mb"] == "12" and fields["equal"] == "no"


def test_iqr_is_the_spread_of_the_middle_half():
    values = [3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0]
    q1, q3 = np.percentile(values, [25, 75])
    assert cost.iqr(values) == pytest.approx(q3 - q1)


def test_the_sampler_benchmark_samples_one_workload_both_ways_and_finds_one_peak(tmp_path):
    # The workload's processes inherit the mark; any found after the run outlived it.
    # Output goes to files, not pipes, which a leaked process would hold open.
    mark = f"bench-sampler-{os.getpid()}-{time.time_ns()}"
    command = [sys.executable, str(REPO_ROOT / "benchmarks" / "bench_sampler.py"), "--mb", "60",
               "--seconds", "0.5", "--repeats", "5"]
    out, err = tmp_path / "out", tmp_path / "err"
    try:
        with open(out, "w") as stdout, open(err, "w") as stderr:
            done = subprocess.run(command, stdout=stdout, stderr=stderr, timeout=600,
                                  env={**os.environ, MARK: mark})
    finally:
        outlived = marked_processes(MARK, mark)
        for process in outlived:
            with contextlib.suppress(psutil.NoSuchProcess):
                process.kill()
    assert not outlived, "the workload outlived the benchmark"
    assert done.returncode == 0, err.read_text()
    result = dict(field.split("=", 1) for field in out.read_text().splitlines()[-1].split()[1:])
    assert result["name"] == "sampler" and result["equal"] == "yes" and result["repeats"] == "5"
    assert float(result["kit_s"]) > 0 and float(result["peer_s"]) > 0
