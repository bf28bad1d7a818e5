"""Run one grading job where student code cannot reach the grader's files or outlive the job.

Student code is hostile: it may rewrite a classmate's notebook, ``grades.csv``, the kit's
own code or a shared cache, leave a process behind, or eat the machine. Each job therefore
runs as a command in a *sandbox*:

- **bubblewrap** (``bwrap``, Debian package ``bubblewrap``) where it works: the whole file
  system read-only, a private ``/tmp``, the job's scratch folder the only writable place
  (thrown away by the caller), the data folder seen read-only through the scratch folder
  (``KIT_DATA_DIR``), no network, its own process tree (every process is killed when the
  job ends, and when the grader dies), and an unprivileged user when the grader is root, so
  the process cap holds.
- otherwise a plain subprocess with the same limits in its own session, killed as a group
  at the end; student code then runs as the grader's user and could write the grader's
  files, which ``sandbox`` says once.

Both apply ``Limits`` with ``setrlimit``: address space and CPU time per process, process
count, and (in the caller's nbval plugin) printed output.
"""

from __future__ import annotations

import functools
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import psutil

from helpers.errors import KitError

#: Folders inside the data folder that notebooks write as their own output: in the sandbox
#: they start empty and writable (and are thrown away), where every other entry is read-only.
WRITABLE_DATA = ("projector", "annotations")
#: The unprivileged users sandboxes run as when the grader is root (one per concurrent job,
#: so each has its own process count).
SANDBOX_UID_BASE = 62000
SANDBOX_UID_SPAN = 2000
#: Seconds between counts of a job's processes and threads.
WATCH_SECONDS = 0.2
#: Environment passed into the sandbox: nothing else of the grader's leaks in.
#: The last characters of a job's own output kept for the record.
OUTPUT_TAIL = 4000
PASSED_ENV = ("PATH", "LANG", "LC_ALL", "TZ", "OPENBLAS_CORETYPE", "PYTHONHASHSEED")


@dataclass(frozen=True)
class Limits:
    """What one grading job may use.

    Parameters
    ----------
    memory_mb : int
        Address space per process, in MB (``RLIMIT_AS``); numpy's ``MemoryError`` past it.
    cpu_seconds : int
        CPU seconds per process (``RLIMIT_CPU``); the process is killed past it.
    processes : int
        Processes and threads at once (``RLIMIT_NPROC``).
    output_mb : int
        Output (printed text, displayed data) the notebook may produce in all, in MB.
    """

    memory_mb: int = 6144
    cpu_seconds: int = 7200
    processes: int = 512
    output_mb: int = 20

    def __post_init__(self) -> None:
        for name in ("memory_mb", "cpu_seconds", "processes", "output_mb"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise KitError(f"Limits.{name} must be a positive whole number, not {value!r}.")


@dataclass(frozen=True)
class Outcome:
    """How a sandboxed command ended and what it used."""

    returncode: int
    seconds: float
    cpu_seconds: float
    peak_memory_mb: float
    timed_out: bool
    output: str
    stopped_for: str = ""


def bwrap() -> str | None:
    """The ``bwrap`` executable if it is installed and can make a sandbox here, else None."""
    return _probe_bwrap()


@functools.cache
def _probe_bwrap() -> str | None:
    found = shutil.which("bwrap")
    if found is None:
        return None
    probe = subprocess.run([found, "--ro-bind", "/", "/", "--unshare-all", "--die-with-parent", "true"],
                           capture_output=True)
    return found if probe.returncode == 0 else None


_warned = threading.Event()


def kind() -> str:
    """``"bubblewrap"`` or ``"subprocess"``; says once on stderr when it is the weaker one."""
    if bwrap() is not None:
        return "bubblewrap"
    if not _warned.is_set():
        _warned.set()
        print("kit grade: bubblewrap (bwrap) is not available, so student code runs as your user "
              "with resource limits only and could change your files. Install it: "
              "apt-get install bubblewrap.", file=sys.stderr)
    return "subprocess"


class Slots:
    """Hands each concurrent job its own cores and its own sandbox user.

    Jobs share the machine's cores evenly, pinned with CPU affinity, so a kernel's BLAS and
    joblib (which size themselves by the cores they may use) do not oversubscribe it.
    """

    def __init__(self, jobs: int) -> None:
        cores = sorted(os.sched_getaffinity(0))
        jobs = max(1, jobs)
        self._free = [(slot, frozenset(cores[slot % len(cores)::jobs] or cores))
                      for slot in range(jobs)]
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


def sandbox_uid(slot: int) -> int | None:
    """The user a job in ``slot`` runs as: unprivileged when the grader is root and that
    user can run the kit's Python (not so when it lives in root's home), else None."""
    if os.geteuid() != 0 or not _others_can_run_python():
        return None
    return SANDBOX_UID_BASE + (os.getpid() * 8 + slot) % SANDBOX_UID_SPAN


@functools.cache
def _others_can_run_python() -> bool:
    found = bwrap()
    if found is None:
        return False
    probe = subprocess.run([found, "--ro-bind", "/", "/", "--unshare-all", "--die-with-parent",
                            sys.executable, "-c", "import helpers, nbval"],
                           capture_output=True, user=SANDBOX_UID_BASE, group=SANDBOX_UID_BASE,
                           extra_groups=[], env={"PYTHONPATH": _code_root()}, cwd="/")
    return probe.returncode == 0


def prepare_scratch(scratch: Path, data_dir: Path, uid: int | None) -> Path:
    """Lay out the scratch folder: ``home/`` and ``data/`` (the data folder seen through it).

    Returns the folder the sandbox uses as its data folder. Without bubblewrap it is the real
    data folder (the fallback cannot make it read-only).
    """
    for name in ("home", "data", "tmp"):
        (scratch / name).mkdir(parents=True, exist_ok=True)
    if uid is not None:
        for path in (scratch, *scratch.rglob("*")):
            os.chown(path, uid, uid)
    return scratch / "data" if bwrap() else data_dir


def environment(scratch: Path, data_dir: Path, cores: frozenset[int],
                extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The job's environment: a few of the grader's variables, the rest pointing into scratch."""
    env = {name: os.environ[name] for name in PASSED_ENV if name in os.environ}
    home = scratch / "home"
    threads = str(len(cores))
    env.update({
        "HOME": str(home), "TMPDIR": str(scratch / "tmp"), "KIT_DATA_DIR": str(data_dir),
        "KIT_WORK_DIR": str(scratch / "work"), "MPLCONFIGDIR": str(home / ".matplotlib"),
        "JUPYTER_RUNTIME_DIR": str(home / ".jupyter-runtime"), "IPYTHONDIR": str(home / ".ipython"),
        "PYTHONDONTWRITEBYTECODE": "1", "OMP_NUM_THREADS": threads, "OPENBLAS_NUM_THREADS": threads,
        "MKL_NUM_THREADS": threads, "LOKY_MAX_CPU_COUNT": threads, "PYTHONPATH": _code_root(),
    })
    env.update(extra or {})
    return env


def _code_root() -> str:
    from helpers.settings import REPO_ROOT
    return str(REPO_ROOT)


def command(argv: Sequence[str], scratch: Path, data_dir: Path, uid: int | None) -> list[str]:
    """``argv`` wrapped in bubblewrap (or as it is, without), run in ``scratch``."""
    found = bwrap()
    if found is None:
        return list(argv)
    args = [found, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
            "--bind", str(scratch), str(scratch), "--unshare-all", "--die-with-parent",
            "--new-session", "--cap-drop", "ALL", "--chdir", str(scratch)]
    if uid is not None:
        args += ["--uid", str(uid), "--gid", str(uid)]
    if data_dir.is_dir():
        for entry in sorted(data_dir.iterdir()):
            if entry.name not in WRITABLE_DATA and not entry.name.startswith("."):
                args += ["--ro-bind", str(entry), str(scratch / "data" / entry.name)]
    return [*args, *argv]


def run(argv: Sequence[str], scratch: Path, limits: Limits, timeout: float,
        data_dir: Path, slot: tuple[int, frozenset[int]] = (0, frozenset()),
        env: Mapping[str, str] | None = None) -> Outcome:
    """Run ``argv`` in a sandbox in ``scratch`` (which must exist); kill it all after ``timeout`` s.

    Parameters
    ----------
    argv : sequence of str
        The command (e.g. ``python -m pytest notebook.ipynb ...``).
    scratch : Path
        The job's private folder: its working directory and its only writable place.
    limits : Limits
        Per-process memory and CPU time, process count.
    timeout : float
        Wall seconds before every process of the job is killed.
    data_dir : Path
        The kit's data folder, seen read-only.
    slot : (int, frozenset of int)
        From ``Slots.take``: a slot number and the cores to pin the job to (empty: all).
    env : mapping, optional
        Extra environment variables.

    Returns
    -------
    Outcome
    """
    number, cores = slot
    cores = cores or frozenset(os.sched_getaffinity(0))
    uid = sandbox_uid(number) if bwrap() else None
    inside_data = prepare_scratch(scratch, data_dir, uid)
    full = command(argv, scratch, data_dir, uid)
    log = scratch / "sandbox.log"

    started = time.monotonic()
    with open(log, "wb") as out:
        # taskset and prlimit apply the limits before bwrap starts: preexec_fn is unsafe with
        # the grader's threads, and Popen's user/group switch users safely.
        process = subprocess.Popen(
            [*_limited(limits, cores, uid is not None), *full], cwd=scratch, stdin=subprocess.DEVNULL,
            stdout=out, stderr=subprocess.STDOUT, env=environment(scratch, inside_data, cores, env),
            user=uid, group=uid, extra_groups=[] if uid is not None else None, start_new_session=True)
        timed_out, status, cpu, memory, stopped_for = _wait(process, timeout, limits.processes)
    _kill_group(process.pid)
    return Outcome(returncode=os.waitstatus_to_exitcode(status), seconds=time.monotonic() - started,
                   cpu_seconds=cpu, peak_memory_mb=memory, timed_out=timed_out, stopped_for=stopped_for,
                   output=log.read_text(errors="replace")[-OUTPUT_TAIL:])


def _limited(limits: Limits, cores: frozenset[int], own_user: bool) -> list[str]:
    """``taskset`` and ``prlimit`` arguments putting ``limits`` and ``cores`` on a command."""
    memory = limits.memory_mb * 2**20
    args = ["taskset", "--cpu-list", ",".join(map(str, sorted(cores))),
            "prlimit", f"--as={memory}", f"--cpu={limits.cpu_seconds}", "--core=0"]
    if own_user:  # the process cap counts every process of a user; only a user of its own is fair
        args.append(f"--nproc={limits.processes}")
    return [*args, "--"]


def _wait(process: subprocess.Popen, timeout: float, processes: int
          ) -> tuple[bool, int, float, float, str]:
    """Wait for ``process``, killing its group at ``timeout``.

    Returns (timed out, wait status, CPU seconds, peak memory in MB, why the watcher killed
    it or ""). A watcher kills the
    job when it runs more than ``processes`` threads and processes (``RLIMIT_NPROC`` does
    not hold for root, so this is the cap then).
    """
    expired = threading.Event()

    def expire() -> None:
        expired.set()
        _kill_group(process.pid)

    killer = threading.Timer(timeout, expire)
    killer.start()
    watch = _Watch(process.pid, processes)
    try:
        _, status, _ = os.wait4(process.pid, 0)
    finally:
        killer.cancel()
        cpu, memory, stopped_for = watch.stop()
    process.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait again
    return expired.is_set(), status, cpu, memory, stopped_for


class _Watch:
    """Counts a job's processes and threads, and its CPU time and memory, every WATCH_SECONDS.

    ``os.wait4`` cannot see inside bubblewrap's process tree, so the job's use is sampled:
    CPU seconds summed over every process seen, peak memory as the largest total resident set.
    """

    def __init__(self, pid: int, cap: int) -> None:
        self.pid, self.cap = pid, cap
        self.cpu: dict[tuple[int, float], float] = {}
        self.peak_rss = 0
        self.stopped_for = ""
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            root = psutil.Process(self.pid)
            while not self.done.wait(WATCH_SECONDS):
                tree = [root, *root.children(recursive=True)]
                if sum(_threads(p) for p in tree) > self.cap:
                    self.stopped_for = f"it ran more than {self.cap} processes and threads at once"
                    for proc in tree:
                        _kill(proc)
                    return
                self._sample(tree)
        except psutil.NoSuchProcess:
            return

    def _sample(self, tree: list[psutil.Process]) -> None:
        rss = 0
        for proc in tree:
            try:
                with proc.oneshot():
                    times, memory, born = proc.cpu_times(), proc.memory_info(), proc.create_time()
            except psutil.Error:
                continue
            self.cpu[(proc.pid, born)] = times.user + times.system
            rss += memory.rss
        self.peak_rss = max(self.peak_rss, rss)

    def stop(self) -> tuple[float, float, str]:
        """Stop watching; return (CPU seconds, peak memory in MB, why it killed the job or "")."""
        self.done.set()
        self.thread.join()
        return sum(self.cpu.values()), self.peak_rss / 2**20, self.stopped_for


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


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
