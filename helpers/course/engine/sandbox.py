"""Run one grading job where student code cannot reach the grader's files or outlive the job.

Student code is hostile: it may rewrite a classmate's notebook, ``grades.csv``, the kit's
own code or a shared cache, read the solutions, leave a process behind, forge the report
the verdicts are read from, or eat the machine. Each job therefore runs in a *sandbox*:

- **bubblewrap** (``bwrap``, Debian package ``bubblewrap``) where it works:

  - a file system that holds only what the job needs, read-only: the system's programs and
    libraries (``SYSTEM``), Python's installation and the folders it imports from, the kit's
    code (wherever they are, /tmp included), and the data folder inside the job's folder
    (``KIT_DATA_DIR``); nothing else of the machine (the
    repository's solutions, other students' folders, clones elsewhere, homes, sockets) is
    there at all;
  - the job's files copied into a private, size-capped ``/tmp`` that vanishes with it (the
    only writable place; nothing the grader reads afterwards is in it);
  - no network, its own process tree (every process is killed when the job ends, and when
    the grader dies), and an unprivileged user of its own when the grader is root.

- otherwise a plain subprocess with the same limits in its own session, in a scratch folder
  with a private copy of the kit's code; student code then runs as the grader's user and
  could read and write the grader's files, which ``kind`` says once.

The job writes its report into a pipe (``REPORT`` in the command), never into a file the
student's code could rewrite. ``Limits`` apply: address space and CPU time per process,
memory of the whole job, processes and threads at once, the size of ``/tmp``, and (in the
caller's nbval plugin) printed output.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import shutil
import signal
import site
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import psutil

from helpers.course import config
from helpers.errors import KitError

#: Folders inside the data folder that notebooks write as their own output: in the sandbox
#: they start empty and writable (and are thrown away), where every other entry is read-only.
WRITABLE_DATA = ("projector", "annotations")
#: What the job sees of the machine, read-only (symbolic links, as on a merged-/usr
#: system, are made as links); Python's installation and the kit's code are added.
SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc")
#: The unprivileged users sandboxes run as when the grader is root.
SANDBOX_UID_BASE = 62000
SANDBOX_UID_SPAN = 2000
#: Seconds between counts of a job's processes, threads and memory.
WATCH_SECONDS = 0.2
#: The last characters of a job's own output kept for the record.
OUTPUT_TAIL = 4000
#: In a command, where the job writes its report (replaced by a pipe's path).
REPORT = "{report}"
#: The largest report read back, in bytes.
REPORT_CAP = 64 * 2**20
#: The job's folder inside bubblewrap (on its private /tmp).
JOB_DIR = Path("/tmp/kit-job")
#: BLAS threads per job at most: the reference outputs' tolerances were measured with 1 and 2.
MAX_THREADS = 2
#: Environment passed into the sandbox: nothing else of the grader's leaks in.
PASSED_ENV = ("PATH", "LANG", "LC_ALL", "TZ", "OPENBLAS_CORETYPE", "KIT_STRICT_CACHE")
#: What the fallback copies of the kit's code (``helpers`` and the files its tools read).
CODE_COPIED = ("helpers", "nbval_sanitize.cfg")
#: The job's own file systems (bubblewrap), mounted before anything of the machine is shown,
#: so what is shown under them (a clone or a venv under /tmp) lands on top of them.
JOB_MOUNTS = (Path("/dev"), Path("/proc"), Path("/tmp"), Path("/dev/shm"))
#: The job's file systems held in memory (bubblewrap): what is written there counts as memory.
JOB_TMPFS = ("/tmp", "/dev/shm")
#: The lines of ``/proc/PID/smaps_rollup`` that count a process's memory: its share of each
#: page (PSS), shared memory included (anonymous shared maps, SysV shm); a file of the job's
#: tmpfs or a memory file that is also mapped then counts twice, which errs on the safe side.
UNIQUE_MEMORY = (b"Pss_Anon:", b"Pss_File:", b"Pss_Shmem:")
#: Prints (JSON) where a Python started like a job's imports from: its path without the
#: current folder, and the source folders of editable installs (setuptools' finders).
IMPORT_PATHS_SCRIPT = """
import json, sys
paths = [path for path in sys.path if path]
for name, module in list(sys.modules.items()):
    if name.startswith("__editable__") and name.endswith("_finder"):
        paths += getattr(module, "MAPPING", {}).values()
        paths += [path for roots in getattr(module, "NAMESPACES", {}).values() for path in roots]
print(json.dumps(paths))
"""


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
        (sampled: each page once, plus its in-memory files; see ``_Watch._sample``).
    timed_out : bool
        Killed at the wall-time limit.
    output : str
        The last ``OUTPUT_TAIL`` characters it printed.
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


def bwrap() -> str | None:
    """The ``bwrap`` executable if it is installed and can make a sandbox here, else None."""
    return _probe_bwrap()


@functools.cache
def _probe_bwrap() -> str | None:
    found = shutil.which("bwrap")
    if found is None:
        return None
    probe = subprocess.run([found, *_namespaces(), "--ro-bind", "/", "/", "true"], capture_output=True)
    return found if probe.returncode == 0 else None


_warned = threading.Event()


def kind() -> str:
    """``"bubblewrap"`` or ``"subprocess"``; says once on stderr when it is the weaker one."""
    if bwrap() is not None:
        return "bubblewrap"
    if not _warned.is_set():
        _warned.set()
        print("kit grade: bubblewrap (bwrap) is not available, so student code runs as your user "
              "with resource limits only and could read and change your files. Install it: "
              "apt-get install bubblewrap.", file=sys.stderr)
    return "subprocess"


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


def environment(job: Path, data_dir: Path, cores: frozenset[int], code: Path,
                extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The job's environment: a few of the grader's variables, the rest pointing into its folder."""
    env = {name: os.environ[name] for name in PASSED_ENV if name in os.environ}
    home = job / "home"
    threads = str(min(len(cores), MAX_THREADS))
    env.update({
        "HOME": str(home), "TMPDIR": str(job / "tmp"), "KIT_DATA_DIR": str(data_dir),
        "KIT_WORK_DIR": str(job / "work"), "MPLCONFIGDIR": str(home / ".matplotlib"),
        "JUPYTER_RUNTIME_DIR": str(home / ".jupyter-runtime"), "IPYTHONDIR": str(home / ".ipython"),
        "PYTHONDONTWRITEBYTECODE": "1", "OMP_NUM_THREADS": threads, "OPENBLAS_NUM_THREADS": threads,
        "MKL_NUM_THREADS": threads, "LOKY_MAX_CPU_COUNT": str(len(cores)), "PYTHONPATH": str(code),
        # Set here, not passed on: a Dask worker's environment holds its own hash seed.
        **config.REFERENCE_ENV, **_user_base(),
    })
    env.update(extra or {})
    return env


def _user_base() -> dict[str, str]:
    """``PYTHONUSERBASE`` when the grader's Python imports from the user's site-packages
    (``pip install --user``), which a job's own ``HOME`` would not lead to."""
    if site.ENABLE_USER_SITE and site.getusersitepackages() in sys.path:
        return {"PYTHONUSERBASE": site.getuserbase()}
    return {}


def _code_root() -> Path:
    from helpers.settings import REPO_ROOT
    return REPO_ROOT


def _private_code(scratch: Path) -> Path:
    """A copy of the kit's code in ``scratch`` (the fallback's private tree)."""
    code = scratch / "code"
    for name in CODE_COPIED:
        source = _code_root() / name
        if source.is_dir():
            shutil.copytree(source, code / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            code.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, code / name)
    return code


def _memory_file(name: str, data: bytes) -> int:
    """A file descriptor holding ``data``, read from its start (bubblewrap's ``--file``)."""
    fd = os.memfd_create(name)
    os.write(fd, data)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def _namespaces() -> list[str]:
    """Everything but the user namespace when root (the job's user is switched inside, so
    the process cap counts that user), everything when not (bubblewrap needs it then)."""
    if os.geteuid() == 0:
        return ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try"]
    return ["--unshare-all"]


def _visible(paths: Sequence[Path], mounted: Sequence[Path] = ()) -> list[str]:
    """Arguments showing ``paths`` read-only on an empty root, with every parent folder
    made open (bubblewrap would make them private to root), except those ``mounted`` already."""
    args, made = [], set(mounted)
    for path in sorted(paths):
        if path.is_symlink() and path.parent == Path("/"):
            args += ["--symlink", os.readlink(path), str(path)]
            continue
        if not path.exists():
            continue
        for parent in reversed(path.parents):
            if parent != Path("/") and parent not in made:
                made.add(parent)
                args += ["--perms", "0755", "--dir", str(parent)]
        args += ["--ro-bind", str(path), str(path)]
    return args


@functools.cache
def _import_paths() -> frozenset[Path]:
    """Where the grader's Python, started as a job's is (no ``PYTHONPATH``, in ``/``), imports
    from: its path (site-packages, ``.pth`` additions) and the sources of editable installs."""
    env = {name: os.environ[name] for name in PASSED_ENV if name in os.environ} | _user_base()
    probe = subprocess.run([sys.executable, "-c", IMPORT_PATHS_SCRIPT], capture_output=True,
                           text=True, env=env, cwd="/")
    if probe.returncode != 0:
        raise KitError(f"Could not ask Python ({sys.executable}) where it imports from:\n"
                       + probe.stderr[-1500:])
    return frozenset(Path(os.path.abspath(path)) for path in json.loads(probe.stdout.splitlines()[-1]))


def _harmless(path: Path) -> bool:
    """Whether showing ``path`` hides none of the job's own mounts and shows no more of the
    kit's repository (its solutions) than the kit's code."""
    kept_out = (_code_root(), JOB_DIR, *JOB_MOUNTS)
    special = (Path("/dev"), Path("/proc"))
    return not any(path == other or path in other.parents for other in kept_out) and \
        not any(folder in path.parents for folder in special)


def _shown() -> set[Path]:
    """What of the machine a job sees: the system, the kit's code, Python's installation (its
    prefixes, the real executable's) and every folder it imports from; nested ones once.

    Raises
    ------
    KitError
        If the kit's code or Python lies where the job's folder goes, or holds it.
    """
    python = {Path(sys.prefix), Path(sys.base_prefix)}
    executable = Path(sys.executable).resolve()
    found = _import_paths() | {executable.parent, executable.parent.parent}
    found |= {path.resolve() for path in found}
    shown = {Path(path) for path in SYSTEM} | {_code_root() / name for name in CODE_COPIED}
    shown |= python | {path.resolve() for path in python}
    shown |= {path for path in found if path.exists() and _harmless(path)}
    shown = {path for path in shown if not any(parent in shown for parent in path.parents)}
    for path in shown:
        if path == JOB_DIR or JOB_DIR in path.parents or path in JOB_DIR.parents:
            raise KitError(f"{path} (the kit's code, its Python or a folder Python imports from) "
                           f"overlaps {JOB_DIR}, where the grading sandbox puts each job's files: "
                           "move it to another folder.")
    return shown


def bwrap_command(argv: Sequence[str], files: Mapping[str, int], data_dir: Path, disk_mb: int,
                  uid: int | None) -> list[str]:
    """``argv`` wrapped in bubblewrap, run in ``JOB_DIR`` holding ``files`` (name -> fd)."""
    size = str(disk_mb * 2**20)
    # the job's own mounts first: what is shown under /tmp (a clone, a venv) lands on its tmpfs
    args = [bwrap(), "--perms", "0755", "--tmpfs", "/", "--dev", "/dev", "--proc", "/proc",
            "--perms", "1777", "--size", size, "--tmpfs", "/tmp",
            "--perms", "1777", "--size", size, "--tmpfs", "/dev/shm",
            *_visible(sorted(_shown()), JOB_MOUNTS)]
    for folder in ("", "home", "tmp", "data"):
        args += ["--perms", "0777" if uid is not None else "0755", "--dir", str(JOB_DIR / folder)]
    for name, fd in files.items():
        args += ["--perms", "0644", "--file", str(fd), str(JOB_DIR / name)]
    if data_dir.is_dir():
        for entry in sorted(data_dir.iterdir()):
            if entry.name not in WRITABLE_DATA and not entry.name.startswith("."):
                args += ["--ro-bind", str(entry), str(JOB_DIR / "data" / entry.name)]
    args += ["--remount-ro", "/", *_namespaces(), "--die-with-parent", "--new-session",
             "--chdir", str(JOB_DIR)]
    if uid is None:
        return [*args, "--cap-drop", "ALL", *argv]
    # root inside switches to the job's user for good: setpriv drops every capability with it
    return [*args, "--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID",
            "setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--no-new-privs", "--",
            *argv]


_RUNNING: set[int] = set()
_RUNNING_LOCK = threading.Lock()


def kill_all() -> None:
    """Kill every job still running (``kit grade`` interrupted)."""
    with _RUNNING_LOCK:
        for pid in list(_RUNNING):
            _kill_tree(pid)


def run(argv: Sequence[str], files: Mapping[str, bytes], limits: Limits, timeout: float,
        data_dir: Path, slot: tuple[int, frozenset[int]] = (0, frozenset()),
        env: Mapping[str, str] | None = None) -> Outcome:
    """Run ``argv`` in a sandbox, in a folder holding ``files``; kill it all after ``timeout`` s.

    Parameters
    ----------
    argv : sequence of str
        The command (e.g. ``python -m pytest notebook.ipynb ...``), run in the job's folder;
        ``REPORT`` in it stands for the path its report goes to (``Outcome.report``).
    files : mapping of str to bytes
        The job's input files, by name, put in its folder.
    limits : Limits
        What the job may use.
    timeout : float
        Wall seconds before every process of the job is killed.
    data_dir : Path
        The kit's data folder, seen read-only (bubblewrap) or as it is (fallback).
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
    report_read, report_write = os.pipe()
    # pytest opens the pipe by its path (/dev/fd/N) as the job's user, which needs write
    # permission; only the job's pytest holds it (it is non-dumpable, see nbval_plugin)
    os.fchmod(report_write, 0o602)
    argv = [arg.replace(REPORT, f"/dev/fd/{report_write}") for arg in argv]
    passed = [report_write]
    scratch = None
    with contextlib.ExitStack() as stack:
        try:
            if bwrap() is not None:
                uid = stack.enter_context(_job_user(number)) if os.geteuid() == 0 else None
                fds = {name: _memory_file(name, data) for name, data in files.items()}
                passed += fds.values()
                command = bwrap_command(argv, fds, data_dir, limits.disk_mb, uid)
                job, inside_data, code = JOB_DIR, JOB_DIR / "data", _code_root()
            else:
                uid = None
                job = scratch = Path(tempfile.mkdtemp(prefix="kit-grade-"))
                for name, data in files.items():
                    (job / name).write_bytes(data)
                command, inside_data, code = list(argv), data_dir, _private_code(scratch)
            return _supervised(command, limits, timeout, cores, uid, passed, report_read,
                               environment(job, inside_data, cores, code, env), scratch,
                               JOB_TMPFS if scratch is None else ())
        finally:
            for fd in passed:
                _close(fd)
            _close(report_read)
            if scratch is not None:
                shutil.rmtree(scratch, ignore_errors=True)


@contextmanager
def _job_user(slot: int) -> Iterator[int]:
    """Reserve a uid no account and no other job on this machine uses (a lock file per uid
    held while the job runs), so each job's process cap is its own."""
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


def _close(fd: int) -> None:
    try:
        os.close(fd)
    except OSError:
        pass


def _supervised(command: list[str], limits: Limits, timeout: float, cores: frozenset[int],
                uid: int | None, passed: list[int], report_read: int, env: dict[str, str],
                cwd: Path | None, tmpfs: Sequence[str]) -> Outcome:
    """Start ``command`` under the limits, read its report and output, wait, account."""
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
    with _RUNNING_LOCK:
        _RUNNING.add(process.pid)
    for fd in passed:  # the job holds them now: the report pipe ends when the job does
        _close(fd)
    passed.clear()
    report = _Reader(os.fdopen(report_read, "rb", closefd=False), REPORT_CAP, keep="head")
    output = _Reader(process.stdout, OUTPUT_TAIL * 4, keep="tail")
    try:
        timed_out, status, watch = _wait(process, timeout, limits, tmpfs)
    finally:
        with _RUNNING_LOCK:
            _RUNNING.discard(process.pid)
    return Outcome(returncode=os.waitstatus_to_exitcode(status), seconds=time.monotonic() - started,
                   cpu_seconds=watch.cpu_seconds(), peak_memory_mb=watch.peak_bytes / 2**20,
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
    """Samples a job's processes and threads, CPU time and memory every WATCH_SECONDS.

    ``os.wait4`` cannot see inside bubblewrap's process tree, so the job's use is sampled:
    CPU seconds summed over every process seen, peak memory as the largest total of what the
    job holds (``_sample``). Past a limit it kills the job and says why.
    """

    def __init__(self, pid: int, limits: Limits, tmpfs: Sequence[str] = ()) -> None:
        self.pid, self.limits, self.tmpfs = pid, limits, tmpfs
        self.cpu: dict[tuple[int, float], float] = {}
        self.peak_bytes = 0
        self.stopped_for = ""
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            root = psutil.Process(self.pid)
            while not self.done.wait(WATCH_SECONDS):
                tree = [root, *root.children(recursive=True)]
                held = self._sample(tree)
                if sum(_threads(p) for p in tree) > self.limits.processes:
                    self._stop(tree, f"it ran more than {self.limits.processes} processes and "
                               "threads at once")
                elif held > self.limits.memory_mb * 2**20:
                    self._stop(tree, f"it used more than {self.limits.memory_mb} MB of memory in all")
        except psutil.NoSuchProcess:
            return

    def _stop(self, tree: list[psutil.Process], why: str) -> None:
        self.stopped_for = why
        for proc in tree:
            _kill(proc)
        self.done.set()

    def _sample(self, tree: list[psutil.Process]) -> int:
        """Record CPU times; return the job's memory as the kernel holds it: each page once
        (a forked child's pages shared with its parent are not counted twice), what is written
        to its in-memory file systems and memory files (``memfd_create``), which no resident
        set shows."""
        total = 0
        for proc in tree:
            try:
                with proc.oneshot():
                    times, memory, born = proc.cpu_times(), proc.memory_info(), proc.create_time()
            except psutil.Error:
                continue
            self.cpu[(proc.pid, born)] = times.user + times.system
            unique = _unique_memory(proc.pid)
            total += memory.rss if unique is None else unique
        total += _memory_files(tree) + _tmpfs_used(tree, self.tmpfs)
        self.peak_bytes = max(self.peak_bytes, total)
        return total

    def stop(self) -> None:
        """Stop watching."""
        self.done.set()
        self.thread.join()

    def cpu_seconds(self) -> float:
        """CPU seconds of every process seen."""
        return sum(self.cpu.values())


def _unique_memory(pid: int) -> int | None:
    """Bytes of a process's proportional share of its pages outside shared memory (PSS), or
    None where the kernel does not say (no ``smaps_rollup``, or the process is not readable)."""
    try:
        with open(f"/proc/{pid}/smaps_rollup", "rb") as rollup:
            fields = [line for line in rollup if line.startswith(UNIQUE_MEMORY)]
    except OSError:
        return None
    return sum(int(line.split()[1]) for line in fields) * 1024 if fields else None


def _tmpfs_used(tree: list[psutil.Process], mounts: Sequence[str]) -> int:
    """Bytes written to the job's in-memory file systems ``mounts``, seen through a process
    of the job (``/proc/PID/root``) whose mount is not the machine's own."""
    used = 0
    for mount in mounts:
        try:
            machines = os.stat(mount).st_dev
        except OSError:
            machines = None
        for proc in tree:  # the first process inside the job's mount namespace sees its own
            path = f"/proc/{proc.pid}/root{mount}"
            try:
                if os.stat(path).st_dev == machines:
                    continue
                info = os.statvfs(path)
            except OSError:
                continue
            used += (info.f_blocks - info.f_bfree) * info.f_frsize
            break
    return used


def _memory_files(tree: list[psutil.Process]) -> int:
    """Bytes held in anonymous memory files (``memfd_create``) the processes have open: memory
    that no resident-set count shows."""
    sizes = {}
    for proc in tree:
        try:
            fds = os.listdir(f"/proc/{proc.pid}/fd")
        except OSError:
            continue
        for fd in fds:
            path = f"/proc/{proc.pid}/fd/{fd}"
            try:
                if os.readlink(path).startswith("/memfd:"):
                    info = os.stat(path)
                    sizes[(info.st_dev, info.st_ino)] = info.st_size
            except OSError:
                continue
    return sum(sizes.values())


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
    """Kill ``pid`` and every descendant (the fallback's kernel runs in a session of its own)."""
    try:
        root = psutil.Process(pid)
        tree = [*root.children(recursive=True), root]
    except psutil.NoSuchProcess:
        return
    for proc in tree:
        _kill(proc)


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def self_test(data_dir: Path) -> None:
    """Run the kit's Python in a sandbox once; raise a KitError saying why if it cannot.

    Raises
    ------
    KitError
        If the sandbox's user cannot run the kit (e.g. Python or the kit installed where
        only the grader can read them).
    """
    command = [sys.executable, "-c", "import helpers, nbval, os; os.listdir('data')"]
    outcome = run(command, {}, Limits(), 120, data_dir)
    if outcome.returncode != 0:
        raise KitError("The grading sandbox cannot run the kit here:\n" + outcome.output[-1500:])
