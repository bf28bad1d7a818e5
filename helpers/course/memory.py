"""The memory a group of processes holds, and its peak while they run: one sampler for all.

``kit run`` (the notebook runner), the grading sandbox and the benchmarks all ask the same
question: how much memory did this work hold at its largest? They ask it of different
processes (the runner's kernels, a sandboxed job's tree, a benchmark's own process and
everything it started), so the processes are given as a function that lists them, and one
``PeakSampler`` counts what they hold every ``SAMPLE_SECONDS`` in a thread.

What a group holds is counted as the kernel charges it (``held``): each page once (a
process's proportional share, PSS, so a forked child's pages shared with its parent are not
counted twice; the resident size where PSS cannot be read), plus what the group wrote to
anonymous memory files and to in-memory file systems, which no resident size shows.

Reading PSS walks every page table of a process: about 30 ms of CPU per sample for a
notebook's kernel and its workers, 15 % of a core at five samples a second, taken from the
work it watches. So the sampler reads cheap counters every time and counts exactly only when
the count could matter (``PeakSampler.sample``): the resident size (each page in full) is
never less than the exact count, and what the group gained since an exact count is at most
its growth in resident size plus a page per page fault (a copy-on-write, which leaves the
resident size as it was, is a fault).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Sequence
from numbers import Integral

import psutil

from helpers.errors import InputError

#: Seconds between two samples.
SAMPLE_SECONDS = 0.2
#: While what the group may have gained since the last exact count stays within
#: EXACT_MARGIN bytes, the sampler counts exactly again only after EXACT_SECONDS.
EXACT_MARGIN = 16 * 2**20
EXACT_SECONDS = 2.0
PAGE_BYTES = os.sysconf("SC_PAGE_SIZE")
#: minflt and majflt among the fields of ``/proc/PID/stat`` after the command's ")".
FAULT_FIELDS = (7, 9)
#: The lines of ``/proc/PID/smaps_rollup`` that count a process's memory: its share of each
#: page (PSS), shared memory included (anonymous shared maps, SysV shm); a file of an
#: in-memory file system or a memory file that is also mapped then counts twice, which errs
#: on the safe side.
UNIQUE_MEMORY = (b"Pss_Anon:", b"Pss_File:", b"Pss_Shmem:")

Processes = Callable[[], list[psutil.Process]]
#: The sampler's clock (a test moves it by hand).
_clock = time.monotonic


def tree(pid: int) -> Processes:
    """The processes of ``pid``'s tree (itself and every descendant), listed anew each time.

    Parameters
    ----------
    pid : int
        The tree's root.

    Returns
    -------
    callable
        Returns the list at each call; raises ``psutil.NoSuchProcess`` once the root has ended.
    """
    found: list[psutil.Process] = []

    def listed() -> list[psutil.Process]:
        if not found:  # the first time, in the sampling thread: the process may be gone already
            found.append(psutil.Process(pid))
        return [found[0], *found[0].children(recursive=True)]

    return listed


def children() -> Processes:
    """This process's descendants (what it started, e.g. a notebook's kernel), listed anew each time.

    Returns
    -------
    callable
        Returns the list of descendants at each call (itself not included).
    """
    me = psutil.Process()
    return lambda: me.children(recursive=True)


def unique_memory(pid: int) -> int | None:
    """A process's proportional share of its pages (PSS).

    Parameters
    ----------
    pid : int

    Returns
    -------
    int or None
        Bytes; None where the kernel does not say (no ``smaps_rollup``, or the process is not
        readable).
    """
    try:
        with open(f"/proc/{pid}/smaps_rollup", "rb") as rollup:
            fields = [line for line in rollup if line.startswith(UNIQUE_MEMORY)]
    except OSError:
        return None
    return sum(int(line.split()[1]) for line in fields) * 1024 if fields else None


def held(processes: Sequence[psutil.Process], tmpfs: Sequence[str] = ()) -> int:
    """The memory a group of processes holds, as the kernel charges it.

    Parameters
    ----------
    processes : sequence of psutil.Process
    tmpfs : sequence of str
        In-memory file systems (mount points) whose contents count, as the processes' own
        mount namespace sees them.

    Returns
    -------
    int
        Bytes: each page once (PSS, else the resident size), plus what they wrote to anonymous
        memory files (``memfd_create``) and to ``tmpfs``. A process that ended is left out.
    """
    return _pages(processes) + memory_files(processes) + tmpfs_used(processes, tmpfs)


def _pages(processes: Sequence[psutil.Process]) -> int:
    """Each page the processes map, once (PSS; the resident size where PSS cannot be read)."""
    total = 0
    for process in processes:
        unique = unique_memory(process.pid)
        if unique is None:
            try:
                unique = process.memory_info().rss
            except psutil.Error:
                continue
        total += unique
    return total


def page_faults(pid: int) -> int:
    """How many page faults (minor and major) a process has taken, from ``/proc/PID/stat``.

    Parameters
    ----------
    pid : int

    Returns
    -------
    int
        0 where the kernel does not say (no such file, or the process is gone).
    """
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            fields = stat.read().rpartition(b")")[2].split()
    except OSError:
        return 0
    return int(fields[FAULT_FIELDS[0]]) + int(fields[FAULT_FIELDS[1]])


def tmpfs_used(processes: Sequence[psutil.Process], mounts: Sequence[str]) -> int:
    """What was written to in-memory file systems, as a group of processes sees them.

    Parameters
    ----------
    processes : sequence of psutil.Process
    mounts : sequence of str
        Mount points, each seen through the first of ``processes`` (``/proc/PID/root``) whose
        mount there is not the machine's own.

    Returns
    -------
    int
        Bytes in use on those file systems (0 for a mount no process has a private copy of).
    """
    used = 0
    for mount in mounts:
        try:
            machines = os.stat(mount).st_dev
        except OSError:
            machines = None
        for process in processes:
            path = f"/proc/{process.pid}/root{mount}"
            try:
                if os.stat(path).st_dev == machines or not _tmpfs_at(process.pid, mount):
                    continue
                info = os.statvfs(path)
            except OSError:
                continue
            used += (info.f_blocks - info.f_bfree) * info.f_frsize
            break
    return used


def _tmpfs_at(pid: int, mount: str) -> bool:
    """Whether what the process sees mounted at ``mount`` is a tmpfs (the last mount there in
    its ``/proc/PID/mountinfo``). A process still setting up its namespace may see a disk
    there, whose whole use is no memory of the job's."""
    try:
        with open(f"/proc/{pid}/mountinfo", encoding="utf-8", errors="replace") as table:
            kinds = [fields[fields.index("-") + 1] for fields in map(str.split, table)
                     if len(fields) > 4 and fields[4] == mount and "-" in fields]
    except OSError:
        return False
    return bool(kinds) and kinds[-1] == "tmpfs"


def memory_files(processes: Sequence[psutil.Process]) -> int:
    """What anonymous memory files (``memfd_create``) the processes have open hold.

    Parameters
    ----------
    processes : sequence of psutil.Process

    Returns
    -------
    int
        Bytes, each file counted once however many descriptors point at it.
    """
    sizes = {}
    for process in processes:
        try:
            fds = os.listdir(f"/proc/{process.pid}/fd")
        except OSError:
            continue
        for fd in fds:
            path = f"/proc/{process.pid}/fd/{fd}"
            try:
                if os.readlink(path).startswith("/memfd:"):
                    info = os.stat(path)
                    sizes[(info.st_dev, info.st_ino)] = info.st_size
            except OSError:
                continue
    return sum(sizes.values())


class PeakSampler:
    """Samples what a group of processes holds, and their CPU time, in a thread.

    Parameters
    ----------
    processes : callable
        Lists the processes to count, at each sample (``tree``, ``children``).
    interval : float
        Seconds between samples.
    tmpfs : sequence of str
        In-memory file systems whose contents count as the group's memory (``held``).
    after_sample : callable, optional
        Called with the processes and the bytes they held after each sample (the sandbox
        stops a job past its limits there): what ``sample`` returns.
    exact_above : int, optional
        Bytes (a limit) above which every sample is an exact count.

    Attributes
    ----------
    peak_bytes : int
        The largest ``held`` counted so far. A peak that rose by less than ``EXACT_MARGIN``
        above the last count and fell again within ``EXACT_SECONDS`` is missed by that much
        at most; so is a rise from pages the group shared with processes outside it, which
        ended (shared libraries: a few MB).
    exact_counts : int
        How many samples counted exactly.

    Use as a context manager, or ``start`` and ``stop``. The sampling ends by itself when the
    processes can no longer be listed (their root ended).
    """

    def __init__(self, processes: Processes, interval: float = SAMPLE_SECONDS, tmpfs: Sequence[str] = (),
                 after_sample: Callable[[list[psutil.Process], int], None] | None = None,
                 exact_above: int | None = None) -> None:
        if not callable(processes):
            raise InputError("processes must be a function listing the processes to sample "
                             "(memory.tree(pid) or memory.children()).")
        if not interval > 0:
            raise InputError(f"interval must be a positive number of seconds, not {interval!r}.")
        if exact_above is not None and (isinstance(exact_above, bool) or not isinstance(exact_above, Integral)
                                        or exact_above < 0):
            raise InputError(f"exact_above must be a whole number of bytes (0 or more), not {exact_above!r}.")
        self.processes, self.interval = processes, interval
        self.tmpfs, self.after_sample, self.exact_above = tmpfs, after_sample, exact_above
        self.peak_bytes = 0
        self.exact_counts = 0
        self._last_exact: tuple[float, int] | None = None  # (when, the bound then)
        self._faults: dict[tuple[int, float], int] = {}  # per process, at the last exact count
        self._cpu: dict[tuple[int, float], float] = {}
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> PeakSampler:
        """Start sampling (the first sample at once)."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop sampling; ``peak_bytes`` and ``cpu_seconds`` stay as they were."""
        self._done.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join()

    def __enter__(self) -> PeakSampler:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def running(self) -> bool:
        """Whether the sampling thread still runs (it ends by itself when its root ends)."""
        return self._thread.is_alive()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait up to ``timeout`` seconds for the sampling to end by itself; True if it has."""
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def cpu_seconds(self) -> float:
        """CPU seconds (user and system) of every process seen, up to its last sample."""
        return sum(self._cpu.values())

    def sample(self) -> int:
        """Count once: record CPU times and the peak; return the bytes held now, or a bound.

        The group's resident size, plus its memory files and in-memory file systems, is an
        upper bound of ``held``. The group is counted exactly (``held``: that count returned
        and kept as the peak if it is one) at the first sample, when the bound is above
        ``exact_above``, and when the bound is above the peak and either ``EXACT_SECONDS``
        have passed since the last exact count or the group may have gained more than
        ``EXACT_MARGIN`` since (its bound's rise plus a page per page fault). Otherwise the
        bound is returned: not above ``exact_above``, and no new peak but by that margin.
        """
        processes = self.processes()
        resident, faults = 0, {}
        for process in processes:
            try:
                with process.oneshot():
                    times, born = process.cpu_times(), process.create_time()
                    resident += process.memory_info().rss
            except psutil.Error:
                continue
            self._cpu[(process.pid, born)] = times.user + times.system
            faults[(process.pid, born)] = page_faults(process.pid)
        extra = memory_files(processes) + tmpfs_used(processes, self.tmpfs)
        now = resident + extra
        if self._exact_needed(now, faults):
            self._last_exact, self._faults = (_clock(), now), faults
            now = _pages(processes) + extra
            self.exact_counts += 1
            self.peak_bytes = max(self.peak_bytes, now)
        if self.after_sample is not None:
            self.after_sample(processes, now)
        return now

    def _exact_needed(self, bound: int, faults: dict[tuple[int, float], int]) -> bool:
        """Whether a group that holds at most ``bound``, its processes having taken ``faults``,
        must be counted exactly."""
        if self._last_exact is None or (self.exact_above is not None and bound > self.exact_above):
            return True
        if bound <= self.peak_bytes:  # held <= bound <= peak: no new peak
            return False
        when, last = self._last_exact
        new_faults = sum(count - self._faults.get(key, 0) for key, count in faults.items())
        gained = max(bound - last, 0) + new_faults * PAGE_BYTES
        return gained > EXACT_MARGIN or _clock() - when >= EXACT_SECONDS

    def _run(self) -> None:
        try:
            while not self._done.is_set():
                self.sample()
                self._done.wait(self.interval)
        except psutil.NoSuchProcess:
            return
