"""Run ``kit grade``'s tasks in parallel: in threads on this machine, or on a Dask cluster.

A task is one piece of work, such as one student's notebook to grade. :func:`run_tasks` runs
one function on every task and hands each result to the caller as soon as it arrives, so the
caller can write it to disk at once. Where the tasks run (:func:`parse_scheduler`):

- no scheduler: a thread pool on this machine (each task runs its notebook in a subprocess
  of its own, so threads are enough);
- ``local:N``: a Dask ``LocalCluster`` of N single-threaded worker processes on this machine,
  started for the run and closed after it;
- a Dask scheduler's address (``tcp://HOST:8786``): a cluster started beforehand, with
  ``dask scheduler`` and ``dask worker``, or by dask-jobqueue on SLURM or PBS.

On a cluster the function and the tasks travel to the workers by pickle: the function must be
defined at the top level of a module the workers can import, and the tasks must be plain data
(dataclasses, dicts, strings, paths). Workers on other machines must see the same repository
checkout, virtualenv and data folder at the same paths (a shared filesystem), and a task must
name its files by absolute path; anything a task writes for the caller must go into its result,
since the caller's machine may not share the worker's temporary folders.

A worker that dies while it runs a task (out of memory, killed by the batch system) loses
nothing: the Dask scheduler runs the task again on another worker, up to
``distributed.scheduler.allowed-failures`` times (3 by default). A task may therefore run more
than once and must be safe to repeat. ``local:N`` sends each worker one task at a time; a
scheduler started by hand queues a second one behind it, which a dying worker takes down too,
unless it was started with ``DASK_DISTRIBUTED__SCHEDULER__WORKER_SATURATION=1``.
"""

from __future__ import annotations

import argparse
import logging
import re
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import CancelledError, ThreadPoolExecutor, as_completed
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

from helpers import settings
from helpers.course import config
from helpers.errors import InputError, KitError

if TYPE_CHECKING:
    from distributed import Client, LocalCluster

Task = TypeVar("Task")
Result = TypeVar("Result")

LOCAL = "local"
WORKER_COUNT = re.compile(r"[0-9]+")
LAST_PORT = 65535
#: Dask logs every worker's start and stop at INFO; the grading's own messages would drown.
CLUSTER_LOG_LEVEL = logging.WARNING
#: Tasks that raised named in the error beside the first one (a bug may hit every task).
NAMED_FAILURES = 5
ACCEPTED = ("local (one worker per core on this machine), local:N (N workers on this machine, "
            "N a whole number from 1) or a Dask scheduler's address "
            "(HOST:PORT, tcp://HOST:PORT, tls://HOST:PORT, inproc://...)")


@dataclass(frozen=True)
class Scheduler:
    """Where :func:`run_tasks` sends its tasks: a cluster started here, or one at an address.

    Attributes
    ----------
    workers : int or None
        Worker processes of a ``LocalCluster`` started on this machine (``local:N``).
    address : str or None
        A running Dask scheduler's address, with its protocol (``tcp://host:8786``).
    """

    workers: int | None = None
    address: str | None = None

    def __post_init__(self) -> None:
        if (self.workers is None) == (self.address is None):
            raise InputError("A Scheduler has either a number of local workers or an address.")

    def __str__(self) -> str:
        return self.address or f"{LOCAL}:{self.workers}"


def parse_scheduler(text: str) -> Scheduler:
    """Read a ``--scheduler`` value: ``local``, ``local:N`` or a Dask scheduler's address.

    Parameters
    ----------
    text : str
        ``local`` (one worker per core Dask may use here), ``local:N`` (N ≥ 1 workers), or an
        address: ``HOST:PORT`` (TCP), ``tcp://HOST:PORT``, ``tls://HOST:PORT``, ``inproc://...``
        or another protocol Dask knows.

    Returns
    -------
    Scheduler
        An address comes back with its protocol (``host:8786`` gives ``tcp://host:8786``).

    Raises
    ------
    KitError
        For anything else, saying what is accepted.
    """
    text = text.strip()
    name, colon, count = text.partition(":")
    if name == LOCAL:
        if not colon:
            from dask.system import CPU_COUNT  # counts the cores this process may use

            return Scheduler(workers=CPU_COUNT)
        if WORKER_COUNT.fullmatch(count) and int(count) >= 1:
            return Scheduler(workers=int(count))
        raise KitError(_refusal(text))
    return Scheduler(address=_address(text))


def scheduler_arg(text: str) -> Scheduler:
    """:func:`parse_scheduler` as an argparse ``type``: a refusal becomes a usage error."""
    try:
        return parse_scheduler(text)
    except KitError as err:
        raise argparse.ArgumentTypeError(str(err)) from err


def _address(text: str) -> str:
    """``text`` with its protocol, if it is an address a Dask client can connect to."""
    # distributed takes half a second to import: only a run on a cluster pays for it.
    from distributed.comm.addressing import normalize_address, parse_address, parse_host_port
    from distributed.comm.registry import get_backend

    try:
        scheme, location = parse_address(text, strict=False)
        get_backend(scheme)
        if scheme == "inproc":
            valid = bool(location)
        else:
            host, port = parse_host_port(location)
            valid = bool(host) and not any(c.isspace() for c in host) and 1 <= port <= LAST_PORT
    except ValueError:
        valid = False
    if not valid:
        raise KitError(_refusal(text))
    return normalize_address(text)


def _refusal(text: str) -> str:
    return f"{text!r} is not a scheduler: give {ACCEPTED}."


class _Lost(Exception):
    """The cluster lost a task (its workers died, or the scheduler dropped it): not a bug."""


def run_tasks(function: Callable[[Task], Result], tasks: Iterable[Task], *,
              on_result: Callable[[Task, Result], None],
              scheduler: Scheduler | str | None = None, jobs: int = config.GRADE_JOBS,
              on_lost: Callable[[Task, str], None] | None = None) -> None:
    """Run ``function(task)`` for every task; hand each result to ``on_result`` as it arrives.

    Parameters
    ----------
    function : callable
        Takes one task. On a cluster it must be defined at the top level of a module the
        workers import, and be safe to run twice on a task (see the module's docstring).
    tasks : iterable
        Plain data; ``str(task)`` names a task in messages (give a dataclass a ``__str__``).
    on_result : callable
        ``on_result(task, result)``, called in the calling thread as each task finishes, in the
        order they finish, so the caller can write each result to disk at once. An exception
        it raises stops the run: tasks not yet finished are cancelled.
    scheduler : Scheduler or str, optional
        Where to run (:func:`parse_scheduler`). Default: a thread pool on this machine.
    jobs : int
        Threads in that pool; unused with a scheduler.
    on_lost : callable, optional
        ``on_lost(task, message)``, called in the calling thread for a task the cluster lost:
        every worker that ran it died (``allowed-failures`` + 1 times; the workers' logs say
        why, often memory), or the scheduler dropped it. The run goes on. Default: collect the
        messages and raise them as a :class:`KitError` once every other task was delivered.

    Raises
    ------
    Exception
        The first exception a task raised, once every other task's result was handed to
        ``on_result``, with a note naming the task (and others that raised). A task that
        raises has a bug: it is not run again.
    KitError
        Tasks lost, with the default ``on_lost``; no scheduler at the address.
    """
    tasks = list(tasks)
    if not tasks:
        return
    if isinstance(scheduler, str):
        scheduler = parse_scheduler(scheduler)
    lost: list[str] = []
    on_lost = on_lost or (lambda task, message: lost.append(f"{task}: {message}"))
    failures: list[tuple[Task, Exception]] = []
    finished = (_in_threads(function, tasks, jobs) if scheduler is None
                else _on_cluster(function, tasks, scheduler))
    with finished as arrivals:
        for task, fetch in arrivals:
            try:
                result = fetch()
            except _Lost as err:
                on_lost(task, str(err))
            except Exception as err:  # reported once the other tasks are delivered
                failures.append((task, err))
            else:
                on_result(task, result)
    if failures:
        error = _named(failures)
        if lost:
            error.add_note(f"{len(lost)} task(s) were lost by the cluster too.")
        raise error
    if lost:
        raise KitError(f"{len(lost)} task(s) lost by the cluster; run again to retry them:\n"
                       + "\n".join(lost))


def _named(failures: list[tuple[Any, Exception]]) -> Exception:
    """The first task's exception, with notes naming it and the other tasks that raised."""
    task, error = failures[0]
    error.add_note(f"raised by task {task}")
    others = [str(other) for other, _ in failures[1:]]
    if others:
        shown = ", ".join(others[:NAMED_FAILURES]) + (", ..." if len(others) > NAMED_FAILURES else "")
        error.add_note(f"{len(others)} other task(s) raised too: {shown}")
    return error


Arrivals = Iterator[tuple[Any, Callable[[], Any]]]


@contextmanager
def _in_threads(function: Callable, tasks: list, jobs: int) -> Iterator[Arrivals]:
    """Finished tasks of a thread pool, each with the call that returns its result or raises."""
    pool = ThreadPoolExecutor(max_workers=max(1, jobs), thread_name_prefix="kit-task")
    try:
        futures = {pool.submit(function, task): task for task in tasks}
        yield ((futures[future], future.result) for future in as_completed(futures))
    finally:
        # When the caller stops early (its own error, Ctrl-C), tasks not started never start.
        pool.shutdown(cancel_futures=True)


@contextmanager
def _on_cluster(function: Callable, tasks: list, scheduler: Scheduler) -> Iterator[Arrivals]:
    """Finished tasks of a Dask cluster, each with the call that returns its result or raises."""
    with _client(scheduler) as client:
        # pure=False: two equal tasks are two runs, not one result shared.
        futures = client.map(function, tasks, pure=False)
        yield _cluster_arrivals(dict(zip(futures, tasks, strict=True)), client.loop)


def _cluster_arrivals(pending: dict, loop: Any) -> Arrivals:
    from distributed import as_completed as finished_on_cluster

    for future in finished_on_cluster(list(pending), loop=loop):
        yield pending.pop(future), partial(_cluster_result, future)
        # Dropping the result from the workers' memory also means a worker dying later cannot
        # make the scheduler compute it again.
        future.release()


def _cluster_result(future: Any) -> Any:
    """The task's result; a task its workers died running, or one dropped, is ``_Lost``."""
    from distributed import KilledWorker

    try:
        return future.result()
    except KilledWorker as err:
        raise _Lost(f"each of the {err.allowed_failures + 1} workers that ran it died while it ran "
                    "(out of memory? the workers' logs say why)") from err
    except CancelledError as err:
        raise _Lost(f"the scheduler dropped it ({err})") from err


@contextmanager
def _client(scheduler: Scheduler) -> Iterator[Client]:
    """A client of the scheduler at the address, or of a ``LocalCluster`` closed at the end."""
    from distributed import Client

    if scheduler.address is not None:
        try:
            client = Client(scheduler.address, set_as_default=False)
        except OSError as err:
            raise KitError(f"No Dask scheduler answers at {scheduler.address}: start one with "
                           f"`dask scheduler` or check the address ({err}).") from err
        with client:
            yield client
        return
    assert scheduler.workers is not None  # a Scheduler without an address has workers (__post_init__)
    with local_cluster(scheduler.workers) as cluster, Client(cluster, set_as_default=False) as client:
        client.wait_for_workers(scheduler.workers)
        yield client


@contextmanager
def local_cluster(workers: int) -> Iterator[LocalCluster]:
    """Run a ``distributed.LocalCluster`` of single-threaded worker processes, no dashboard.

    ``with local_cluster(n) as cluster:`` stops its workers at the end. Dask's nannies set their
    workers' variables (``PYTHONHASHSEED=6640``, one BLAS thread) in *this* process's
    environment before each spawn; the environment is put back when the cluster closes, so
    kernels this process starts later run as the references were written.
    """
    import dask
    from distributed import LocalCluster

    with settings.environment_kept():
        # A worker is sent one task at a time (Dask's default queues a second one behind it): a
        # task waiting on a worker that dies is counted as a death against it, and may be lost.
        with dask.config.set({"distributed.scheduler.worker-saturation": 1.0}):
            cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                   dashboard_address=None, silence_logs=CLUSTER_LOG_LEVEL,
                                   # The scheduler serves its HTTP routes even without a dashboard:
                                   # on a free local port, not on 8787, which another cluster may hold.
                                   scheduler_kwargs={"dashboard_address": "127.0.0.1:0"})
        with cluster:
            yield cluster
