"""Tasks in a thread pool or on a Dask cluster: results as they arrive, a dead worker's task rerun.

The task functions live at the top of this module: Dask's spawned worker processes import it
by name (they inherit this process's ``sys.path``, where pytest put ``tests/``).
"""

from __future__ import annotations

import argparse
import os
import socket
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import dask
import psutil
import pytest

from helpers.course.classroom.cluster import (
    Scheduler,
    local_cluster,
    parse_scheduler,
    run_tasks,
    scheduler_arg,
)
from helpers.errors import KitError

#: Deaths of its workers the test cluster forgives a task before calling it lost: one, so that
#: a task that kills every worker running it is lost after two deaths, not dask's default four.
ALLOWED_FAILURES = 1
#: Seconds the job that waits for another job's delivery waits at most (only if none comes).
PATIENCE = 30.0


@dataclass(frozen=True)
class Job:
    """A task: its name and a folder for files that outlive the process running it."""

    name: str
    folder: Path

    def __str__(self) -> str:
        return self.name


def whereabouts(job: Job) -> tuple[str, int, int]:
    """Who ran the job: its name, the process and the thread."""
    time.sleep(0.2)  # long enough for every worker to get a job
    return job.name, os.getpid(), threading.get_ident()


def waits_for_a_delivery(job: Job) -> str:
    """The job named ``slow`` ends (leaving ``slow.done``) once ``delivered`` appears; others at once."""
    if job.name == "slow":
        deadline = time.monotonic() + PATIENCE
        while not (job.folder / "delivered").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        (job.folder / "slow.done").touch()
    return job.name


def bad_raises(job: Job) -> str:
    """Jobs named ``bad...`` raise at once; the others return after a while."""
    if job.name.startswith("bad"):
        raise ValueError(f"a bug in {job.name}")
    time.sleep(0.5)
    return job.name


def attempts(job: Job) -> list[int]:
    """Record this attempt at the job (the pid of its process); return every attempt's pid."""
    record = job.folder / f"{job.name}.attempts"
    with record.open("a") as out:
        out.write(f"{os.getpid()}\n")
    return [int(pid) for pid in record.read_text().split()]


def dies_first_time(job: Job) -> list[int]:
    """The job named ``dies`` kills its worker on its first attempt; returns every attempt's pid."""
    pids = attempts(job)
    if job.name == "dies" and len(pids) == 1:
        os._exit(1)
    return pids


def dies_every_time(job: Job) -> list[int]:
    """The job named ``dies`` kills the worker that runs it, every time."""
    pids = attempts(job)
    if job.name == "dies":
        os._exit(1)
    return pids


# --- parse_scheduler ---------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "expected"), [
    ("local:2", Scheduler(workers=2)),
    ("local:16", Scheduler(workers=16)),
    (" local:3 ", Scheduler(workers=3)),
    ("tcp://node1:8786", Scheduler(address="tcp://node1:8786")),
    ("node1:8786", Scheduler(address="tcp://node1:8786")),
    ("localhost:8786", Scheduler(address="tcp://localhost:8786")),
    ("tls://10.0.0.1:8786", Scheduler(address="tls://10.0.0.1:8786")),
    ("[::1]:8786", Scheduler(address="tcp://[::1]:8786")),
    ("inproc://10.0.0.1/123/1", Scheduler(address="inproc://10.0.0.1/123/1")),
])
def test_parse_scheduler_accepts(text, expected):
    assert parse_scheduler(text) == expected


def test_local_alone_is_one_worker_per_core():
    from dask.system import CPU_COUNT

    assert parse_scheduler("local") == Scheduler(workers=CPU_COUNT)
    assert str(parse_scheduler("local:4")) == "local:4"
    assert str(parse_scheduler("node1:8786")) == "tcp://node1:8786"


@pytest.mark.parametrize("text", [
    "local:0", "local:-1", "local:", "local:two", "local:2.5", "local:²", "local:2:3",
    "node1", "tcp://node1", "node1:0", "node1:65536", "node1:port", ":8786", "tcp://node1:8786/x",
    "http://node1:8786", "inproc://", "", "two words:8786",
])
def test_parse_scheduler_refuses_and_says_what_is_accepted(text):
    with pytest.raises(KitError, match=r"is not a scheduler: give local .*local:N .*tcp://HOST:PORT"):
        parse_scheduler(text)
    with pytest.raises(argparse.ArgumentTypeError, match=r"is not a scheduler: give local"):
        scheduler_arg(text)


def test_scheduler_arg_is_an_argparse_type(capsys):
    parser = argparse.ArgumentParser(prog="kit")
    parser.add_argument("--scheduler", type=scheduler_arg)
    assert parser.parse_args(["--scheduler", "local:2"]).scheduler == Scheduler(workers=2)
    with pytest.raises(SystemExit):
        parser.parse_args(["--scheduler", "local:0"])
    assert "'local:0' is not a scheduler" in capsys.readouterr().err


# --- run_tasks ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def address():
    """A running two-worker cluster's address (``--scheduler ADDRESS``) that forgives one death."""
    with (dask.config.set({"distributed.scheduler.allowed-failures": ALLOWED_FAILURES}),
          local_cluster(2) as running):
        yield running.scheduler_address


@pytest.fixture(params=["threads", "cluster"])
def where(request) -> dict:
    """``run_tasks`` keywords: a two-thread pool, or the running cluster's address."""
    if request.param == "threads":
        return {"jobs": 2}
    return {"scheduler": request.getfixturevalue("address")}


def test_threads_deliver_every_result_in_the_calling_thread(tmp_path):
    batch = [Job(f"job{i}", tmp_path) for i in range(5)]
    delivered = []
    run_tasks(whereabouts, batch, jobs=2,
              on_result=lambda job, result: delivered.append((job, result, threading.get_ident())))
    assert sorted(job.name for job, _, _ in delivered) == [job.name for job in batch]
    assert all(job.name == name for job, (name, _, _), _ in delivered)
    assert {caller for _, _, caller in delivered} == {threading.get_ident()}
    ran_in = {thread for _, (_, _, thread), _ in delivered}
    assert threading.get_ident() not in ran_in and len(ran_in) <= 2


def test_results_arrive_as_each_task_finishes(tmp_path, where):
    batch = [Job("slow", tmp_path), *(Job(f"fast{i}", tmp_path) for i in range(3))]
    deliveries = []  # (result, whether slow had ended), in the order they came

    def deliver(job: Job, result: str) -> None:
        deliveries.append((result, (tmp_path / "slow.done").exists()))
        (tmp_path / "delivered").touch()

    run_tasks(waits_for_a_delivery, batch, **where, on_result=deliver)
    assert sorted(result for result, _ in deliveries) == ["fast0", "fast1", "fast2", "slow"]
    first, slow_had_ended = deliveries[0]
    assert first != "slow" and not slow_had_ended


def test_a_local_cluster_runs_the_tasks_in_its_worker_processes_and_closes(tmp_path):
    before = dict(os.environ)
    batch = [Job(f"job{i}", tmp_path) for i in range(6)]
    delivered = {}
    calling_thread = []
    run_tasks(whereabouts, batch, scheduler="local:2",
              on_result=lambda job, result: (delivered.update({job.name: result}),
                                             calling_thread.append(threading.get_ident())))
    assert set(delivered) == {job.name for job in batch}
    assert all(name == job for job, (name, _, _) in delivered.items())
    pids = {pid for _, pid, _ in delivered.values()}
    assert len(pids) == 2 and os.getpid() not in pids
    assert set(calling_thread) == {threading.get_ident()}
    assert not any(psutil.pid_exists(pid) for pid in pids)  # the cluster was closed
    assert dict(os.environ) == before  # Dask's nannies set PYTHONHASHSEED=6640 here while it ran


def test_a_worker_dying_mid_task_reruns_that_task(tmp_path, address):
    batch = [Job("dies", tmp_path), *(Job(f"job{i}", tmp_path) for i in range(4))]
    delivered = {}
    run_tasks(dies_first_time, batch, scheduler=address,
              on_result=lambda job, pids: delivered.update({job.name: pids}))
    assert set(delivered) == {job.name for job in batch}
    first, second = delivered["dies"]  # the result is the second attempt's
    assert first != second and not psutil.pid_exists(first)


def test_a_task_whose_workers_all_die_is_reported_lost_after_the_others(tmp_path, address):
    batch = [Job("dies", tmp_path), *(Job(f"job{i}", tmp_path) for i in range(3))]
    delivered, lost = [], []
    run_tasks(dies_every_time, batch, scheduler=address,
              on_result=lambda job, _: delivered.append(job.name),
              on_lost=lambda job, message: lost.append((job.name, message)))
    assert sorted(delivered) == ["job0", "job1", "job2"]
    assert lost == [("dies", lost[0][1])] and "2 workers that ran it died" in lost[0][1]
    assert len((tmp_path / "dies.attempts").read_text().split()) == ALLOWED_FAILURES + 1

    delivered.clear()
    with pytest.raises(KitError, match=r"1 task\(s\) lost by the cluster.*\ndies: each of the 2"):
        run_tasks(dies_every_time, batch, scheduler=address,
                  on_result=lambda job, _: delivered.append(job.name))
    assert sorted(delivered) == ["job0", "job1", "job2"]


def test_a_task_that_raises_is_named_after_the_others_are_delivered(tmp_path, where):
    batch = [Job("bad", tmp_path), *(Job(f"job{i}", tmp_path) for i in range(3)), Job("bad2", tmp_path)]
    delivered = []
    with pytest.raises(ValueError, match="a bug in bad") as raised:
        run_tasks(bad_raises, batch, **where, on_result=lambda job, _: delivered.append(job.name))
    assert sorted(delivered) == ["job0", "job1", "job2"]
    assert raised.value.__notes__ == ["raised by task bad", "1 other task(s) raised too: bad2"]


def test_no_scheduler_at_the_address_is_a_kit_error(tmp_path):
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with (dask.config.set({"distributed.comm.timeouts.connect": "2s"}),
          pytest.raises(KitError, match=f"No Dask scheduler answers at tcp://127.0.0.1:{port}")):
        run_tasks(whereabouts, [Job("job", tmp_path)], scheduler=f"127.0.0.1:{port}",
                  on_result=lambda job, result: None)


def test_no_tasks_start_nothing():
    run_tasks(whereabouts, [], scheduler=Scheduler(address="tcp://127.0.0.1:1"),
              on_result=lambda job, result: pytest.fail("no task, no result"))
