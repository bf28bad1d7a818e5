"""Run one grading job where student code cannot reach the grader's files or outlive the job.

Student code is hostile: it may rewrite a classmate's notebook, ``grades.csv``, the kit's
own code or a shared cache, read the solutions, leave a process behind, forge the report
the verdicts are read from, or eat the machine. Each job therefore runs in a *sandbox*:

- **bubblewrap** (``bwrap``, Debian package ``bubblewrap``) where it works:

  - a file system that holds only what the job needs, read-only: the system's programs and
    libraries (``bubblewrap.SYSTEM``), Python's installation and the folders it imports from,
    the kit's code (wherever they are, /tmp included), and the data folder inside the job's folder
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

Its parts: ``limits`` (what a job may use, its cores and its user), ``bubblewrap`` (the
command and the environment the job sees) and ``supervise`` (starting, watching and killing
it). This module puts them together: ``run`` one job, ``kind`` of sandbox, ``self_test``.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import tempfile
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path

from helpers.course.engine import bubblewrap, supervise
from helpers.course.engine import limits as limits_
from helpers.course.engine.limits import Job, Limits, Outcome, Slots
from helpers.course.engine.supervise import kill_all, stopping_together
from helpers.errors import KitError
from helpers.log import LOGGER

__all__ = ["BUBBLEWRAP", "REPORT", "SUBPROCESS", "Job", "Limits", "Outcome", "Slots", "kill_all", "kind",
           "run", "self_test", "stopping_together"]

#: In a command, where the job writes its report (replaced by a pipe's path).
REPORT = "{report}"


_warned = threading.Event()
#: The sandboxes ``kind`` names: bubblewrap, or the weaker fallback without it.
BUBBLEWRAP, SUBPROCESS = "bubblewrap", "subprocess"


def kind() -> str:
    """``BUBBLEWRAP`` or ``SUBPROCESS``; says once on stderr when it is the weaker one."""
    if bubblewrap.bwrap() is not None:
        return BUBBLEWRAP
    if not _warned.is_set():
        _warned.set()
        LOGGER.warning("kit grade: bubblewrap (bwrap) is not available, so student code runs as your "
                       "user with resource limits only and could read and change your files. Install "
                       "it: apt-get install bubblewrap.")
    return SUBPROCESS


def run(argv: Sequence[str], files: Mapping[str, bytes], limits: Limits, timeout: float,
        data_dir: Path, slot: tuple[int, frozenset[int]] = (0, frozenset()),
        env: Mapping[str, str] | None = None, hidden_data: Sequence[str] = (),
        listed_data: Sequence[str] = ()) -> Outcome:
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
    hidden_data : sequence of str
        Paths in ``data_dir``, relative to it, that the job must not see.
    listed_data : sequence of str
        Folders of ``data_dir`` (their names) of which only the files named here (paths
        relative to it) are shown.

    Returns
    -------
    Outcome

    Raises
    ------
    KitError
        If ``hidden_data`` or ``listed_data`` names paths and bubblewrap, which alone can hide
        them, is not here.
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
            if bubblewrap.bwrap() is not None:
                uid = stack.enter_context(limits_.job_user(number)) if os.geteuid() == 0 else None
                fds = {name: bubblewrap.memory_file(name, data) for name, data in files.items()}
                passed += fds.values()
                command = bubblewrap.bwrap_command(argv, fds, data_dir, limits.disk_mb, uid, hidden_data,
                                                   listed_data)
                job, code = bubblewrap.JOB_DIR, bubblewrap.code_root()
                inside_data = job / "data"
            elif hidden_data or listed_data:
                unseen = ", ".join([*hidden_data, *listed_data])
                raise KitError(f"This job must not see some of the data folder ({unseen}), and only "
                               "bubblewrap can hide it: apt-get install bubblewrap.")
            else:
                uid = None
                job = scratch = Path(tempfile.mkdtemp(prefix="kit-grade-"))
                for name, data in files.items():
                    (job / name).write_bytes(data)
                command, inside_data, code = list(argv), data_dir, bubblewrap.private_code(scratch)
            return supervise.supervised(command, limits, timeout, cores, uid, passed, report_read,
                                        bubblewrap.environment(job, inside_data, cores, code, env), scratch,
                                        bubblewrap.JOB_TMPFS if scratch is None else ())
        finally:
            for fd in passed:
                supervise.close_fd(fd)
            supervise.close_fd(report_read)
            if scratch is not None:
                shutil.rmtree(scratch, ignore_errors=True)


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
