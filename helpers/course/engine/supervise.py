"""Supervise a grading job: start it under its limits, watch it, read what it says, kill it all.

``supervised`` starts the command pinned to its cores with per-process limits (``taskset``,
``prlimit``), reads its report (a pipe) and its output in threads, waits for it, kills every
process of it at the wall-time limit, and stops it past its memory or process limits (sampled:
``helpers.course.memory``). ``stopping_together`` ends every job of a run when it is
interrupted (``kill_all``), those a worker starts after the interrupt included.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import psutil

from helpers.course import memory
from helpers.course.engine.limits import Limits, Outcome

#: The last characters of a job's own output kept for the record.
OUTPUT_TAIL = 4000
#: The largest report read back, in bytes.
REPORT_CAP = 64 * 2**20
#: Seconds a process told to stop (to be killed with its tree) is waited for, and between looks.
STOP_WAIT = 2.0
STOP_POLL = 0.001
#: The states of a process that can start no other.
_NOT_RUNNING = frozenset({psutil.STATUS_STOPPED, psutil.STATUS_TRACING_STOP, psutil.STATUS_ZOMBIE,
                          psutil.STATUS_DEAD})


_RUNNING: set[int] = set()
_RUNNING_LOCK = threading.Lock()
#: Set by ``kill_all``: a job that starts after it (a thread that was about to start one when
#: Ctrl-C came) is killed as soon as it has started. ``stopping_together`` clears it.
_stopped = False


def kill_all() -> None:
    """Kill every job still running (``kit grade`` interrupted), and every job started after
    this call, until ``stopping_together`` is entered again."""
    global _stopped
    with _RUNNING_LOCK:
        _stopped = True
        for pid in list(_RUNNING):
            _kill_tree(pid)


@contextlib.contextmanager
def stopping_together() -> Iterator[None]:
    """Run jobs in this block so that Ctrl-C (or SIGTERM, ``stops``) ends all of them.

    The jobs run in sessions of their own, which a terminal's Ctrl-C does not reach: when a
    ``KeyboardInterrupt`` (or any other error) leaves the block, every job running is killed,
    and so is every job a worker thread starts after it (``kill_all``), until the next block
    starts; then the exception goes on.
    """
    global _stopped
    with _RUNNING_LOCK:
        _stopped = False
    try:
        yield
    except BaseException:
        kill_all()
        raise


def _register(pid: int) -> None:
    """Count ``pid`` as a running job, or kill it at once if the run was stopped."""
    with _RUNNING_LOCK:
        _RUNNING.add(pid)
        if _stopped:
            _kill_tree(pid)


def close_fd(fd: int) -> None:
    """Close the file descriptor ``fd``; one already closed is no error."""
    try:
        os.close(fd)
    except OSError:
        pass


def supervised(command: list[str], limits: Limits, timeout: float, cores: frozenset[int],
                uid: int | None, passed: list[int], report_read: int, env: dict[str, str],
                cwd: Path | None, tmpfs: Sequence[str]) -> Outcome:
    """Start ``command`` under the limits, read its report and output, wait, account.

    Parameters
    ----------
    command : list of str
        What to run (already wrapped in bubblewrap, or the fallback's plain command).
    limits : Limits
        Applied per process (``prlimit``) and to the whole job (``_Watch``).
    timeout : float
        Wall seconds before every process of the job is killed.
    cores : frozenset of int
        The cores the job is pinned to (``taskset``).
    uid : int, optional
        The job's own user (bubblewrap as root): only then is the process cap applied.
    passed : list of int
        Descriptors the job inherits (its files, the report pipe's writing end); closed here
        once the job holds them.
    report_read : int
        The report pipe's reading end.
    env : dict
        The job's whole environment.
    cwd : Path, optional
        Where it starts (default ``/``).
    tmpfs : sequence of str
        The job's in-memory file systems, whose contents count as its memory.

    Returns
    -------
    Outcome
    """
    started = time.monotonic()
    # taskset and prlimit apply the limits before bwrap starts (preexec_fn is unsafe with the
    # grader's threads); the process cap holds for the job's own user only
    limited = ["taskset", "--cpu-list", ",".join(map(str, sorted(cores))), "prlimit",
               f"--as={limits.memory_mb * 2**20}", f"--cpu={limits.cpu_seconds}", "--core=0",
               f"--fsize={limits.disk_mb * 2**20}",
               *([f"--nproc={limits.processes}"] if uid is not None else []), "--"]
    process = subprocess.Popen([*limited, *command], cwd=cwd or "/", stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
                               pass_fds=passed, start_new_session=True)
    _register(process.pid)
    for fd in passed:  # the job holds them now: the report pipe ends when the job does
        close_fd(fd)
    passed.clear()
    report = _Reader(os.fdopen(report_read, "rb", closefd=False), REPORT_CAP, keep="head")
    output = _Reader(process.stdout, OUTPUT_TAIL * 4, keep="tail")
    try:
        timed_out, status, watch = _wait(process, timeout, limits, tmpfs)
    finally:
        with _RUNNING_LOCK:
            _RUNNING.discard(process.pid)
    return Outcome(returncode=os.waitstatus_to_exitcode(status), seconds=time.monotonic() - started,
                   cpu_seconds=watch.sampler.cpu_seconds(), peak_memory_mb=watch.sampler.peak_bytes / 2**20,
                   timed_out=timed_out, stopped_for=watch.stopped_for,
                   output=output.result().decode(errors="replace")[-OUTPUT_TAIL:],
                   report=report.result())


class _Reader:
    """Reads a stream to its end in a thread, keeping at most ``cap`` bytes (its head or tail)."""

    def __init__(self, stream, cap: int, keep: str) -> None:
        self.stream, self.cap, self.keep = stream, cap, keep
        self.data = bytearray()
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        with self.stream:
            while chunk := self.stream.read1(1 << 16):
                self.data += chunk
                if len(self.data) > self.cap:
                    self.data = self.data[:self.cap] if self.keep == "head" else self.data[-self.cap:]

    def result(self) -> bytes:
        """What was read, once the stream ended (every writer closed it)."""
        self.thread.join()
        return bytes(self.data)


def _wait(process: subprocess.Popen, timeout: float, limits: Limits,
          tmpfs: Sequence[str]) -> tuple[bool, int, _Watch]:
    """Wait for ``process``, killing all of it at ``timeout``; return (timed out, status, watch).

    The watch kills the job past ``limits.processes`` or ``limits.memory_mb`` in all (its
    in-memory file systems ``tmpfs`` included).
    """
    expired = threading.Event()

    def expire() -> None:
        expired.set()
        _kill_tree(process.pid)

    killer = threading.Timer(timeout, expire)
    killer.start()
    watch = _Watch(process.pid, limits, tmpfs)
    try:
        _, status, _ = os.wait4(process.pid, 0)
    finally:
        killer.cancel()
        watch.stop()
        _kill_group(process.pid)  # the fallback's leftovers in its session (bwrap's died with it)
    process.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait again
    return expired.is_set(), status, watch


class _Watch:
    """Watches a job: its memory and CPU time (``memory.PeakSampler``: ``os.wait4`` cannot see
    inside bubblewrap's process tree), and its processes and threads; past a limit it kills
    the job and says why."""

    def __init__(self, pid: int, limits: Limits, tmpfs: Sequence[str] = ()) -> None:
        self.pid, self.limits = pid, limits
        self.stopped_for = ""
        self.sampler = memory.PeakSampler(memory.tree(pid), tmpfs=tmpfs, after_sample=self._enforce,
                                          exact_above=limits.memory_mb * 2**20)
        self.sampler.start()  # after the assignment: a first sample past a limit stops it

    def _enforce(self, tree: list[psutil.Process], held: int) -> None:
        """Stop the job past a limit; ``held`` is the sampler's count (exact above the memory
        limit: ``exact_above``)."""
        if sum(_threads(p) for p in tree) > self.limits.processes:
            self._stop(tree, f"it ran more than {self.limits.processes} processes and threads at once")
        elif held > self.limits.memory_mb * 2**20:
            self._stop(tree, f"it used more than {self.limits.memory_mb} MB of memory in all")

    def _stop(self, tree: list[psutil.Process], why: str) -> None:
        self.stopped_for = why
        _kill_tree(self.pid)
        for proc in tree:  # any the sampler saw that left the job's tree
            _kill(proc)
        self.sampler.stop()

    def stop(self) -> None:
        """Stop watching."""
        self.sampler.stop()


def _threads(process: psutil.Process) -> int:
    try:
        return process.num_threads()
    except psutil.Error:
        return 0


def _kill(process: psutil.Process) -> None:
    try:
        process.kill()
    except psutil.Error:
        pass


def _kill_tree(pid: int) -> None:
    """Kill ``pid`` and every descendant (the fallback's kernel runs in a session of its own).

    Every process of the tree is stopped (SIGSTOP) before its children are listed, and all are
    killed once none is left running: a stopped process starts no other. Listed while running,
    a job killed just after it started could leave one behind: bubblewrap's inner process,
    cloned after the listing and before it asked to die with its parent, ran on, orphaned, and
    held the job's output open (seen with a job started after a stop, on a loaded machine).
    """
    try:
        root = psutil.Process(pid)
    except psutil.NoSuchProcess:
        return
    tree = {pid: root}
    pending = [root]
    while pending:
        for proc in pending:
            _stop(proc)
        for proc in pending:
            _wait_stopped(proc)
        pending = [proc for proc in _descendants(root) if proc.pid not in tree]
        tree.update((proc.pid, proc) for proc in pending)
    for proc in tree.values():
        _kill(proc)


def _stop(process: psutil.Process) -> None:
    try:
        process.suspend()
    except psutil.Error:
        pass


def _wait_stopped(process: psutil.Process) -> None:
    """Wait until ``process`` has stopped (or ended), for at most ``STOP_WAIT`` seconds."""
    deadline = time.monotonic() + STOP_WAIT
    while time.monotonic() < deadline:
        try:
            if process.status() in _NOT_RUNNING:
                return
        except psutil.Error:
            return
        time.sleep(STOP_POLL)


def _descendants(process: psutil.Process) -> list[psutil.Process]:
    """Every descendant of ``process`` (one look at the process table)."""
    try:
        return process.children(recursive=True)
    except psutil.Error:
        return []


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
