"""The grading sandbox on its own: slots, limits, the command, both ways of running a job.

What student code cannot do inside it is tested on whole notebooks in test_grading.py.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import uuid
from pathlib import Path

import psutil
import pytest

from helpers.course.engine import bubblewrap, limits, sandbox, supervise
from helpers.errors import KitError

PRINT_REPORT = [sys.executable, "-c", "import sys; open(sys.argv[1], 'w').write('the report'); "
                "print(open('input.txt').read())", sandbox.REPORT]
#: Where a job's Python imports the kit and nbval from (printed by the job).
PRINT_ORIGINS = [sys.executable, "-c", "import helpers, nbval, sys; print(helpers.__file__, sys.prefix)"]
#: Options of bubblewrap that put something at a path, by how many values they take.
MOUNTING = {"--tmpfs": 1, "--dir": 1, "--dev": 1, "--proc": 1, "--ro-bind": 2, "--bind": 2,
            "--symlink": 2, "--file": 2}
#: Jobs started after a stop while every core is kept busy, and how long they may take in all
#: (each is killed as it starts: a few hundredths of a second; one left running holds the run
#: for its whole sleep, 600 s).
LATE_JOBS = 20
LATE_JOBS_SECONDS = 120


def _needs_bubblewrap() -> None:
    if bubblewrap.bwrap() is None:
        pytest.skip("bubblewrap is not installed")


def _killed(outcome: sandbox.Outcome) -> bool:
    """Whether the job ended by SIGKILL: bubblewrap's own death, or (when the job's process
    was killed a moment before bubblewrap was) the status bubblewrap then exits with."""
    return outcome.returncode in (-signal.SIGKILL, 128 + signal.SIGKILL)


def _mounted(command: list[str]) -> list[tuple[str, Path]]:
    """(option, path) of each thing a bwrap command puts in the job's file system, in order."""
    return [(arg, Path(command[i + MOUNTING[arg]])) for i, arg in enumerate(command) if arg in MOUNTING]


def _kit_copy(folder: Path) -> Path:
    """A copy of the kit's code (what the sandbox shows of it) at ``folder``: the fallback's own."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    return bubblewrap.private_code(folder.parent).rename(folder)


def test_the_fallback_copies_the_kit_s_code_and_nothing_else(tmp_path):
    code = bubblewrap.private_code(tmp_path)
    assert code == tmp_path / "code"
    assert sorted(p.relative_to(code).as_posix() for p in code.iterdir()) == \
        sorted({name.split("/")[0] for name in bubblewrap.CODE_COPIED})
    course = "course/course.toml"  # the significance level the notebooks test at (settings.alpha)
    assert (code / course).read_bytes() == (bubblewrap.code_root() / course).read_bytes()
    assert not list(code.rglob("__pycache__")) and (code / "helpers" / "course" / "memory.py").is_file()
    assert bubblewrap.code_root() / "helpers" == Path(__file__).resolve().parents[1] / "helpers"


def test_a_job_s_file_is_a_memory_file_read_from_its_start():
    fd = bubblewrap.memory_file("input.txt", b"the input")
    try:
        assert os.readlink(f"/proc/self/fd/{fd}").startswith("/memfd:input.txt")
        assert os.read(fd, 100) == b"the input"
    finally:
        supervise.close_fd(fd)
    supervise.close_fd(fd)  # closed already: no error
    with pytest.raises(OSError):
        os.fstat(fd)


def test_each_running_job_has_a_user_of_its_own():
    with limits.job_user(0) as first, limits.job_user(0) as second:
        assert first != second
        assert all(limits.SANDBOX_UID_BASE <= uid < limits.SANDBOX_UID_BASE + limits.SANDBOX_UID_SPAN
                   for uid in (first, second))
    with limits.job_user(0) as again:  # freed when its job ended
        assert again == first


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
    args = bubblewrap._visible([shown, tmp_path / "missing"])
    assert args[-3:] == ["--ro-bind", str(shown), str(shown)]
    assert ["--perms", "0755", "--dir", str(shown.parent)] == args[-7:-3]
    assert str(tmp_path / "missing") not in args
    command = bubblewrap.bwrap_command(["true"], {}, tmp_path, 64, None) if bubblewrap.bwrap() else []
    if command:  # an empty root: only the system, Python and the kit's code are put in it
        assert command[1:4] == ["--perms", "0755", "--tmpfs"] and command[4] == "/"
        bound = {command[i + 1] for i, arg in enumerate(command) if arg == "--ro-bind"}
        assert str(bubblewrap.code_root() / "helpers") in bound
        assert str(bubblewrap.code_root() / "course" / "course.toml") in bound
        root = bubblewrap.code_root()
        assert str(root / "solutions") not in bound and str(root) not in bound


def test_blas_threads_stay_within_the_measured_settings(tmp_path):
    env = bubblewrap.environment(tmp_path, tmp_path / "data", frozenset(range(16)), tmp_path)
    assert env["OPENBLAS_NUM_THREADS"] == str(limits.MAX_THREADS)
    assert env["LOKY_MAX_CPU_COUNT"] == "16"
    assert "KIT_DATA_SOURCE" not in env and env["HOME"].startswith(str(tmp_path))


def test_a_job_imports_from_the_graders_user_site_packages_when_the_grader_does(tmp_path, monkeypatch):
    monkeypatch.setattr(bubblewrap.site, "ENABLE_USER_SITE", True)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p != bubblewrap.site.getusersitepackages()])
    env = bubblewrap.environment(tmp_path, tmp_path / "data", frozenset(range(2)), tmp_path)
    assert "PYTHONUSERBASE" not in env
    monkeypatch.setattr(sys, "path", [*sys.path, bubblewrap.site.getusersitepackages()])
    env = bubblewrap.environment(tmp_path, tmp_path / "data", frozenset(range(2)), tmp_path)
    assert env["PYTHONUSERBASE"] == bubblewrap.site.getuserbase() and env["HOME"] != os.environ.get("HOME")


def test_a_job_runs_with_the_reference_hash_seed_whatever_its_grader_holds(tmp_path, monkeypatch):
    monkeypatch.setenv("PYTHONHASHSEED", "6640")  # what a Dask worker's environment holds
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "1")
    env = bubblewrap.environment(tmp_path, tmp_path / "data", frozenset(range(2)), tmp_path)
    assert env["PYTHONHASHSEED"] == "0" and env["OPENBLAS_NUM_THREADS"] == "2"


@pytest.mark.sandbox
@pytest.mark.parametrize("with_bwrap", [True, False])
def test_a_job_gets_its_files_and_hands_back_its_report_and_output(tmp_path, monkeypatch, with_bwrap):
    if with_bwrap and bubblewrap.bwrap() is None:
        pytest.skip("bubblewrap is not installed")
    if not with_bwrap:
        monkeypatch.setattr(bubblewrap, "bwrap", lambda: None)
    outcome = sandbox.run(PRINT_REPORT, {"input.txt": b"the input"}, sandbox.Limits(), 60, tmp_path)
    assert outcome.returncode == 0, outcome.output
    assert outcome.report == b"the report"
    assert outcome.output.strip() == "the input"
    assert not outcome.timed_out


@pytest.mark.sandbox
def test_a_job_past_its_time_is_killed_with_everything_it_started(tmp_path):
    started = sandbox.run([sys.executable, "-c", "import subprocess, time; subprocess.Popen(['sleep', "
                           "'3600.5']); time.sleep(3600)"], {}, sandbox.Limits(), 3, tmp_path)
    assert started.timed_out and _killed(started)
    left = [line for line in os.popen("ps -eo args").read().splitlines() if line.startswith("sleep 3600.5")]
    assert left == []


@pytest.mark.sandbox
def test_a_job_started_after_a_stop_is_killed_at_once_until_the_next_run(tmp_path):
    """A worker that was about to start a job when Ctrl-C came starts it after ``kill_all``:
    it is killed as soon as it has started, and the next run's jobs run again."""
    sleeper = [sys.executable, "-c", "import time; time.sleep(600)"]
    with pytest.raises(KeyboardInterrupt), supervise.stopping_together():
        raise KeyboardInterrupt
    try:
        late = sandbox.run(sleeper, {}, sandbox.Limits(), 30, tmp_path)
    finally:
        with supervise.stopping_together():  # no later test's job is killed, whatever happened
            pass
    assert _killed(late) and not late.timed_out
    with supervise.stopping_together():
        outcome = sandbox.run(PRINT_REPORT, {"input.txt": b"the input"}, sandbox.Limits(), 60, tmp_path)
    assert outcome.returncode == 0 and outcome.report == b"the report"


def _processes_holding(mark: str) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        if mark in " ".join(proc.info["cmdline"] or ()):
            found.append(proc)
    return found


@pytest.mark.sandbox
def test_jobs_started_after_a_stop_on_a_busy_machine_leave_nothing_running(tmp_path):
    """Killed just after it starts, a job leaves no process behind, however busy the machine.
    Listing a job's processes while they ran missed bubblewrap's inner one when it was cloned
    just after the listing, before it asked to die with its parent: it ran on, orphaned, and
    held the job's output open, so the run waited for it (1 of 2 jobs with both cores busy)."""
    mark = f"late-{uuid.uuid4().hex}"
    sleeper = [sys.executable, "-c", f"import time; time.sleep(600)  # {mark}"]
    outcomes: list[sandbox.Outcome] = []

    def start_late_jobs() -> None:
        for _ in range(LATE_JOBS):
            outcomes.append(sandbox.run(sleeper, {}, sandbox.Limits(), 600, tmp_path))

    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
            for _ in os.sched_getaffinity(0)]
    try:
        with pytest.raises(KeyboardInterrupt), supervise.stopping_together():
            raise KeyboardInterrupt
        starter = threading.Thread(target=start_late_jobs, daemon=True)
        starter.start()
        starter.join(LATE_JOBS_SECONDS)
        left = _processes_holding(mark)
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
        for proc in _processes_holding(mark):
            proc.kill()
        with supervise.stopping_together():  # later tests' jobs run again
            pass
    assert left == [] and not starter.is_alive(), [proc.info["cmdline"][:3] for proc in left]
    assert len(outcomes) == LATE_JOBS and all(_killed(outcome) for outcome in outcomes)


#: Holds 300 MB, then forks four children that keep it (shared with the parent) for 2 s.
FORKS_HOLDING = ("import os, time\nheld = b'x' * (300 * 2**20)\nfor _ in range(4):\n"
                 "    if os.fork() == 0:\n        time.sleep(2)\n        os._exit(0)\n"
                 "for _ in range(4):\n    os.wait()\n")


@pytest.mark.sandbox
@pytest.mark.parametrize("with_bwrap", [True, False])
def test_forked_children_count_their_shared_pages_once(tmp_path, monkeypatch, with_bwrap):
    if with_bwrap:
        _needs_bubblewrap()
    else:
        monkeypatch.setattr(bubblewrap, "bwrap", lambda: None)
    outcome = sandbox.run([sys.executable, "-c", FORKS_HOLDING], {}, sandbox.Limits(memory_mb=1000),
                          60, tmp_path)
    # five processes each showing 300 MB resident hold 300 MB between them
    assert (outcome.returncode, outcome.stopped_for) == (0, ""), outcome.output
    assert 300 <= outcome.peak_memory_mb < 600


@pytest.mark.sandbox
def test_anonymous_shared_memory_counts_as_the_job_s_memory(tmp_path):
    # two processes, each mapping 300 MB of anonymous shared memory (each under its address space)
    shared = ("import mmap, os, time\nfor _ in range(2):\n    if os.fork() == 0:\n"
              "        held = mmap.mmap(-1, 300 * 2**20)\n        for _ in range(300):\n"
              "            held.write(b'x' * 2**20)\n"
              "        time.sleep(5)\n        os._exit(0)\nfor _ in range(2):\n    os.wait()\n")
    stopped = sandbox.run([sys.executable, "-c", shared], {}, sandbox.Limits(memory_mb=450), 60, tmp_path)
    assert stopped.stopped_for == "it used more than 450 MB of memory in all", stopped.output


@pytest.mark.sandbox
def test_what_a_job_writes_to_its_in_memory_tmp_counts_as_its_memory(tmp_path):
    _needs_bubblewrap()
    writes = ("import time\nfor name in ('/tmp/a', '/dev/shm/b'):\n"
              "    open(name, 'wb').write(bytes(150 * 2**20))\ntime.sleep(1)\n")
    outcome = sandbox.run([sys.executable, "-c", writes], {}, sandbox.Limits(), 60, tmp_path)
    assert outcome.returncode == 0, outcome.output
    assert outcome.peak_memory_mb >= 300
    stopped = sandbox.run([sys.executable, "-c", writes], {}, sandbox.Limits(memory_mb=250), 60, tmp_path)
    assert stopped.stopped_for == "it used more than 250 MB of memory in all"


@pytest.mark.sandbox
def test_the_sandbox_runs_the_kit_here(corpora):
    sandbox.self_test(corpora)


def test_no_tmpfs_is_mounted_over_what_the_job_is_shown(tmp_path, monkeypatch):
    code = _kit_copy(tmp_path)  # under /tmp, where a clone of the kit may be
    monkeypatch.setattr(bubblewrap, "code_root", lambda: code)
    mounted = _mounted(bubblewrap.bwrap_command(["true"], {}, tmp_path, 64, None))
    for index, (option, folder) in enumerate(mounted):
        if option == "--tmpfs":
            hidden = [path for _, path in mounted[:index] if path == folder or folder in path.parents]
            assert hidden == [], f"the tmpfs on {folder} hides {hidden}"
    assert ("--ro-bind", code / "helpers") in mounted
    assert ("--dir", Path("/tmp")) not in mounted  # the job's tmpfs is /tmp: it is not made again


def test_folders_holding_the_kits_repository_or_the_jobs_tmp_are_never_shown(tmp_path, monkeypatch):
    code, imported = _kit_copy(tmp_path / "kit"), tmp_path / "site-packages"
    imported.mkdir()
    monkeypatch.setattr(bubblewrap, "code_root", lambda: code)
    monkeypatch.setattr(bubblewrap, "_import_paths", lambda: frozenset({tmp_path, Path("/tmp"), imported}))
    shown = bubblewrap._shown()
    assert imported in shown and code / "helpers" in shown
    assert not {tmp_path, Path("/tmp"), Path("/")} & shown


def test_a_kit_or_python_inside_the_jobs_folder_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(bubblewrap, "code_root", lambda: bubblewrap.JOB_DIR / "clone")
    with pytest.raises(KitError, match="overlaps /tmp/kit-job"):
        bubblewrap.bwrap_command(["true"], {}, tmp_path, 64, None)


@pytest.mark.sandbox
def test_the_kits_code_under_tmp_is_what_a_job_imports(tmp_path, monkeypatch):
    _needs_bubblewrap()
    code = _kit_copy(tmp_path / "clone")
    monkeypatch.setattr(bubblewrap, "code_root", lambda: code)
    outcome = sandbox.run(PRINT_ORIGINS, {}, sandbox.Limits(), 60, tmp_path / "data")
    assert outcome.returncode == 0, outcome.output
    assert outcome.output.startswith(str(code / "helpers" / "__init__.py"))


@pytest.fixture(params=["/tmp", "/var/tmp", "home"])
def elsewhere(request, tmp_path) -> Path:
    """A new folder under /tmp, /var/tmp or the user's home, removed after the test."""
    if request.param == "/tmp":
        yield tmp_path
        return
    base = Path.home() if request.param == "home" else Path(request.param)
    if not os.access(base, os.W_OK):
        pytest.skip(f"cannot write in {base}")
    folder = Path(tempfile.mkdtemp(prefix="kit-sandbox-test-", dir=base))
    yield folder
    shutil.rmtree(folder)


@pytest.mark.sandbox
def test_a_grader_with_its_venv_and_kit_in_tmp_var_tmp_or_home_runs_the_kit(elsewhere):
    _needs_bubblewrap()
    code, venv = _kit_copy(elsewhere / "clone"), elsewhere / "clone" / ".venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    # the grader's packages come from this test's environment through a .pth file, as an
    # installer may add them: that folder must be shown too
    site_packages = next(venv.glob("lib/python*/site-packages"))
    (site_packages / "grader.pth").write_text("\n".join(p for p in sys.path if p.endswith("-packages")))
    grader = ("import sys; from pathlib import Path; from helpers.course.engine import sandbox\n"
              "data = Path(sys.argv[1]); sandbox.self_test(data)\n"
              f"print(sandbox.run([sys.executable, *{PRINT_ORIGINS[1:]!r}], {{}}, sandbox.Limits(), 60, "
              "data).output)")
    done = subprocess.run([venv / "bin" / "python", "-c", grader, elsewhere / "data"], capture_output=True,
                          text=True, env={**os.environ, "PYTHONPATH": str(code)}, cwd=elsewhere, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [str(code / "helpers" / "__init__.py"), str(venv)]
