"""The grading sandbox on its own: slots, limits, the command, both ways of running a job.

What student code cannot do inside it is tested on whole notebooks in test_grading.py.
"""

from __future__ import annotations

import os
import sys

import pytest

from helpers.course import sandbox
from helpers.errors import KitError

PRINT_REPORT = [sys.executable, "-c", "import sys; open(sys.argv[1], 'w').write('the report'); "
                "print(open('input.txt').read())", sandbox.REPORT]


def test_slots_share_the_cores_evenly_and_a_worker_takes_its_own():
    cores = sorted(os.sched_getaffinity(0))
    jobs = 2
    slots = sandbox.Slots(jobs)
    with slots.take() as first, slots.take() as second:
        assert first[0] != second[0]
        assert first[1] | second[1] == set(cores)
        if len(cores) >= jobs:
            assert not first[1] & second[1]
    only = sandbox.Slots(jobs, only=1)
    with only.take() as taken:
        assert taken == (1, frozenset(cores[1 % len(cores)::jobs] or cores))


@pytest.mark.parametrize("field", ["memory_mb", "cpu_seconds", "processes", "output_mb", "disk_mb"])
@pytest.mark.parametrize("value", [0, -1, 1.5, True, "8"])
def test_limits_refuse_anything_but_positive_whole_numbers(field, value):
    with pytest.raises(KitError, match=field):
        sandbox.Limits(**{field: value})


def test_the_job_sees_only_what_it_is_shown_with_open_parent_folders(tmp_path):
    shown = tmp_path.resolve() / "x" / "y"
    shown.mkdir(parents=True)
    args = sandbox._visible([shown, tmp_path / "missing"])
    assert args[-3:] == ["--ro-bind", str(shown), str(shown)]
    assert ["--perms", "0755", "--dir", str(shown.parent)] == args[-7:-3]
    assert str(tmp_path / "missing") not in args
    command = sandbox.bwrap_command(["true"], {}, tmp_path, 64, None) if sandbox.bwrap() else []
    if command:  # an empty root: only the system, Python and the kit's code are put in it
        assert command[1:4] == ["--perms", "0755", "--tmpfs"] and command[4] == "/"
        bound = {command[i + 1] for i, arg in enumerate(command) if arg == "--ro-bind"}
        assert str(sandbox._code_root() / "helpers") in bound
        assert str(sandbox._code_root() / "solutions") not in bound and str(sandbox._code_root()) not in bound


def test_blas_threads_stay_within_the_measured_settings(tmp_path):
    env = sandbox.environment(tmp_path, tmp_path / "data", frozenset(range(16)), tmp_path)
    assert env["OPENBLAS_NUM_THREADS"] == str(sandbox.MAX_THREADS)
    assert env["LOKY_MAX_CPU_COUNT"] == "16"
    assert "KIT_DATA_SOURCE" not in env and env["HOME"].startswith(str(tmp_path))


def test_a_job_runs_with_the_reference_hash_seed_whatever_its_grader_holds(tmp_path, monkeypatch):
    monkeypatch.setenv("PYTHONHASHSEED", "6640")  # what a Dask worker's environment holds
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "1")
    env = sandbox.environment(tmp_path, tmp_path / "data", frozenset(range(2)), tmp_path)
    assert env["PYTHONHASHSEED"] == "0" and env["OPENBLAS_NUM_THREADS"] == "2"


@pytest.mark.parametrize("bubblewrap", [True, False])
def test_a_job_gets_its_files_and_hands_back_its_report_and_output(tmp_path, monkeypatch, bubblewrap):
    if bubblewrap and sandbox.bwrap() is None:
        pytest.skip("bubblewrap is not installed")
    if not bubblewrap:
        monkeypatch.setattr(sandbox, "bwrap", lambda: None)
    outcome = sandbox.run(PRINT_REPORT, {"input.txt": b"the input"}, sandbox.Limits(), 60, tmp_path)
    assert outcome.returncode == 0, outcome.output
    assert outcome.report == b"the report"
    assert outcome.output.strip() == "the input"
    assert not outcome.timed_out


def test_a_job_past_its_time_is_killed_with_everything_it_started(tmp_path):
    started = sandbox.run([sys.executable, "-c", "import subprocess, time; subprocess.Popen(['sleep', "
                           "'3600.5']); time.sleep(3600)"], {}, sandbox.Limits(), 3, tmp_path)
    assert started.timed_out and started.returncode < 0
    left = [line for line in os.popen("ps -eo args").read().splitlines() if line.startswith("sleep 3600.5")]
    assert left == []


def test_the_sandbox_runs_the_kit_here(corpora):
    sandbox.self_test(corpora)
