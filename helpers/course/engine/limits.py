"""What one grading job may use, and where it runs: its limits, its cores and its user.

``Limits`` are what a job may use (memory, CPU time, processes, output, disk); ``Slots`` hand
concurrent jobs their own cores; ``Job`` is one run's limits, slot and time in all;
``job_user`` reserves an unprivileged user per job when the grader is root. ``Outcome`` is
how a job ended and what it used. The sandbox (``helpers.course.engine.sandbox``) applies them.
"""

from __future__ import annotations

import os
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from helpers.errors import KitError

#: The unprivileged users sandboxes run as when the grader is root.
SANDBOX_UID_BASE = 62000
SANDBOX_UID_SPAN = 2000
#: BLAS threads per job at most: the reference outputs' tolerances were measured with 1 and 2.
MAX_THREADS = 2


@dataclass(frozen=True)
class Limits:
    """What one grading job may use.

    Parameters
    ----------
    memory_mb : int
        Memory in MB: the address space of each process (``RLIMIT_AS``; numpy raises
        ``MemoryError`` past it) and the memory of the whole job: its processes' pages, each
        counted once, and what it wrote to its in-memory ``/tmp`` and ``/dev/shm``.
    cpu_seconds : int
        CPU seconds per process (``RLIMIT_CPU``); the process is killed past it.
    processes : int
        Processes and threads at once.
    output_mb : int
        Output (printed text, displayed data) the notebook may produce in all, in MB.
    disk_mb : int
        What the job may write, in MB (the size of its private ``/tmp``; bubblewrap only).
    """

    memory_mb: int = 6144
    cpu_seconds: int = 7200
    processes: int = 512
    output_mb: int = 20
    disk_mb: int = 1024

    def __post_init__(self) -> None:
        for name in ("memory_mb", "cpu_seconds", "processes", "output_mb", "disk_mb"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise KitError(f"Limits.{name} must be a positive whole number, not {value!r}.")


@dataclass(frozen=True)
class Outcome:
    """How a sandboxed command ended and what it used.

    Attributes
    ----------
    returncode : int
        The command's exit status (negative: killed by that signal).
    seconds, cpu_seconds, peak_memory_mb : float
        Wall time; CPU time of all its processes, and the peak of the memory the job held
        (sampled: each page once, plus its in-memory files; see ``helpers.course.memory.held``).
    timed_out : bool
        Killed at the wall-time limit.
    output : str
        The last characters it printed (``supervise.OUTPUT_TAIL``).
    report : bytes
        What it wrote to ``REPORT``.
    stopped_for : str
        Why the sandbox killed it (a limit), or "".
    """

    returncode: int
    seconds: float
    cpu_seconds: float
    peak_memory_mb: float
    timed_out: bool
    output: str
    report: bytes = b""
    stopped_for: str = ""


@dataclass(frozen=True)
class Job:
    """One run of a graded notebook: its sandbox's limits, its slot, its time in all.

    Attributes
    ----------
    limits : Limits or None
        What it may use, in a sandbox; None runs it without one (``kit check``, ``prepare``).
    slot : (int, frozenset of int)
        Its job slot and cores (``Slots.take``); the default pins nothing.
    budget : float or None
        Seconds the whole run may take; None: every cell its timeout.
    hidden_data : tuple of str
        Paths in the data folder, relative to it, that the job must not see (bubblewrap only:
        a sandbox that cannot hide them refuses to run). ``kit bakeoff`` hides the test
        reviews' labels so.
    listed_data : tuple of str
        Folders of the data folder (their names) shown file by file, and the files shown in
        them (paths relative to the data folder): nothing else of those folders is seen, not
        even a file written there later (an allow-list: ``kit bakeoff``).
    """

    limits: Limits | None = None
    slot: tuple[int, frozenset[int]] = (0, frozenset())
    budget: float | None = None
    hidden_data: tuple[str, ...] = ()
    listed_data: tuple[str, ...] = ()


#: A run without a sandbox, pinned to nothing, each cell its timeout.
UNSANDBOXED = Job()


class Slots:
    """Hands each concurrent job its own cores and its own sandbox user.

    ``jobs`` jobs share the machine's cores evenly, pinned with CPU affinity, so a kernel's
    BLAS and joblib (which size themselves by the cores they may use) do not oversubscribe
    it. A process that runs one of them (a Dask worker of a local cluster) passes ``only``,
    its number.
    """

    def __init__(self, jobs: int, only: int | None = None) -> None:
        cores = sorted(os.sched_getaffinity(0))
        jobs = max(1, jobs)
        mine = range(jobs) if only is None else [only % jobs]  # only: one process of several
        self._free = [(slot, frozenset(cores[slot % len(cores)::jobs] or cores)) for slot in mine]
        self._lock = threading.Condition()

    @contextmanager
    def take(self) -> Iterator[tuple[int, frozenset[int]]]:
        """Wait for a free slot; yield ``(slot, cores)``; free it after."""
        with self._lock:
            self._lock.wait_for(lambda: bool(self._free))
            slot = self._free.pop(0)
        try:
            yield slot
        finally:
            with self._lock:
                self._free.append(slot)
                self._lock.notify()


@contextmanager
def job_user(slot: int) -> Iterator[int]:
    """Reserve a uid no account and no other job on this machine uses (a lock file per uid
    held while the job runs), so each job's process cap is its own.

    Parameters
    ----------
    slot : int
        The job's slot (``Slots.take``): where the search starts, with this process's id.

    Yields
    ------
    int
        The uid, reserved until the ``with`` block ends.

    Raises
    ------
    KitError
        If every uid from ``SANDBOX_UID_BASE`` on is taken.
    """
    import fcntl  # POSIX only, like grading itself: imported here so that `kit --help` works anywhere
    import pwd

    start = (os.getpid() * 64 + slot) % SANDBOX_UID_SPAN
    for step in range(SANDBOX_UID_SPAN):
        uid = SANDBOX_UID_BASE + (start + step) % SANDBOX_UID_SPAN
        try:
            pwd.getpwuid(uid)
            continue
        except KeyError:
            pass
        lock = open(Path(tempfile.gettempdir()) / f"kit-sandbox-uid-{uid}.lock", "a")  # noqa: SIM115
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            lock.close()
            continue
        try:
            yield uid
        finally:
            lock.close()
        return
    raise KitError(f"No free uid from {SANDBOX_UID_BASE} to {SANDBOX_UID_BASE + SANDBOX_UID_SPAN} "
                   "for a grading job: too many jobs at once, or taken by accounts.")
