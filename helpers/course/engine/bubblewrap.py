"""The bubblewrap command a grading job runs in, and the environment it sees.

What the job sees of the machine: the system's programs and libraries (``SYSTEM``), Python's
installation and the folders it imports from, the kit's code, and the data folder read-only
inside the job's folder (``JOB_DIR``), on an empty root; its own ``/dev``, ``/proc`` and
size-capped in-memory ``/tmp`` and ``/dev/shm``; no network; an unprivileged user when the
grader is root. ``bwrap_command`` builds the command, ``environment`` the variables, and
``private_code`` the fallback's copy of the kit's code where bubblewrap is not available.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import site
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import cast

from helpers import settings
from helpers.course import config
from helpers.course.engine.limits import MAX_THREADS
from helpers.errors import KitError

#: Folders inside the data folder that notebooks write as their own output: in the sandbox
#: they start empty and writable (and are thrown away), where every other entry is read-only.
WRITABLE_DATA = ("projector", "annotations")
#: What the job sees of the machine, read-only (symbolic links, as on a merged-/usr
#: system, are made as links); Python's installation and the kit's code are added.
SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc")
#: The job's folder inside bubblewrap (on its private /tmp).
JOB_DIR = Path("/tmp/kit-job")
#: Environment passed into the sandbox: nothing else of the grader's leaks in.
PASSED_ENV = ("PATH", "LANG", "LC_ALL", "TZ", "OPENBLAS_CORETYPE", settings.STRICT_CACHE_ENV)
#: What the job sees of the kit's repository, read-only (the fallback copies it): the kit's code,
#: the files its tools read, and the course file, whose significance level the notebooks test at
#: (``settings.alpha``).
CODE_COPIED = ("helpers", "nbval_sanitize.cfg", "course/course.toml")
#: The job's own file systems (bubblewrap), mounted before anything of the machine is shown,
#: so what is shown under them (a clone or a venv under /tmp) lands on top of them.
JOB_MOUNTS = (Path("/dev"), Path("/proc"), Path("/tmp"), Path("/dev/shm"))
#: The job's file systems held in memory (bubblewrap): what is written there counts as memory.
JOB_TMPFS = ("/tmp", "/dev/shm")
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


def environment(job: Path, data_dir: Path, cores: frozenset[int], code: Path,
                extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The job's environment: a few of the grader's variables, the rest pointing into its folder."""
    env = settings.environment(PASSED_ENV)
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


def code_root() -> Path:
    """The folder holding the kit's code (``helpers/``, ``nbval_sanitize.cfg``): the repository.

    Returns
    -------
    Path
    """
    from helpers.settings import REPO_ROOT
    return REPO_ROOT


def private_code(scratch: Path) -> Path:
    """Copy the kit's code (``CODE_COPIED``) into ``scratch``: the fallback's private tree.

    Parameters
    ----------
    scratch : Path
        The job's scratch folder (the copy goes to ``scratch / "code"``).

    Returns
    -------
    Path
        The copy's root, for the job's ``PYTHONPATH``.
    """
    code = scratch / "code"
    for name in CODE_COPIED:
        source = code_root() / name
        if source.is_dir():
            shutil.copytree(source, code / name, ignore=shutil.ignore_patterns("__pycache__"))
        elif source.is_file():
            (code / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, code / name)
    return code


def memory_file(name: str, data: bytes) -> int:
    """An anonymous memory file holding ``data`` (bubblewrap's ``--file``).

    Parameters
    ----------
    name : str
        Its name (shown in ``/proc``; it has no path).
    data : bytes

    Returns
    -------
    int
        A file descriptor, positioned at the start; the caller closes it.
    """
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
    env = settings.environment(PASSED_ENV) | _user_base()
    probe = subprocess.run([sys.executable, "-c", IMPORT_PATHS_SCRIPT], capture_output=True,
                           text=True, env=env, cwd="/")
    if probe.returncode != 0:
        raise KitError(f"Could not ask Python ({sys.executable}) where it imports from:\n"
                       + probe.stderr[-1500:])
    return frozenset(Path(os.path.abspath(path)) for path in json.loads(probe.stdout.splitlines()[-1]))


def _harmless(path: Path) -> bool:
    """Whether showing ``path`` hides none of the job's own mounts and shows no more of the
    kit's repository (its solutions) than the kit's code."""
    kept_out = (code_root(), JOB_DIR, *JOB_MOUNTS)
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
    shown = {Path(path) for path in SYSTEM} | {code_root() / name for name in CODE_COPIED}
    shown |= python | {path.resolve() for path in python}
    shown |= {path for path in found if path.exists() and _harmless(path)}
    shown = {path for path in shown if not any(parent in shown for parent in path.parents)}
    for path in shown:
        if path == JOB_DIR or JOB_DIR in path.parents or path in JOB_DIR.parents:
            raise KitError(f"{path} (the kit's code, its Python or a folder Python imports from) "
                           f"overlaps {JOB_DIR}, where the grading sandbox puts each job's files: "
                           "move it to another folder.")
    return shown


def _covered(data_dir: Path, paths: Sequence[Path]) -> list[str]:
    """Arguments that cover each of ``paths`` (inside the data folder's entries) in the job's
    data folder: a folder with an empty one, a file with an empty file."""
    args = []
    for path in paths:
        inside = str(JOB_DIR / "data" / path)
        if (data_dir / path).is_dir():
            args += ["--perms", "0555", "--tmpfs", inside]
        elif (data_dir / path).exists():
            args += ["--ro-bind", "/dev/null", inside]
    return args


def _listed(data_dir: Path, folder: Path, listed: Sequence[str]) -> list[str]:
    """Arguments that show of ``folder`` (a folder of the data folder) only the files of
    ``listed`` (paths relative to the data folder) that are still there: its folders made
    (read-only, as all is once ``/`` is remounted so), each of those files bound read-only."""
    paths = [Path(path) for path in listed]
    shown = sorted(path for path in paths if len(path.parts) > 1 and path.parts[0] == folder.name)
    args = ["--dir", str(JOB_DIR / "data" / folder.name)]
    made = {Path(folder.name)}
    for relative in shown:
        if not (data_dir / relative).is_file() or (data_dir / relative).is_symlink():
            continue
        for parent in reversed(relative.parents[:-1]):
            if parent not in made:
                args += ["--dir", str(JOB_DIR / "data" / parent)]
                made.add(parent)
        args += ["--ro-bind", str(data_dir / relative), str(JOB_DIR / "data" / relative)]
    return args


def bwrap_command(argv: Sequence[str], files: Mapping[str, int], data_dir: Path, disk_mb: int,
                  uid: int | None, hidden_data: Sequence[str] = (),
                  listed_data: Sequence[str] = ()) -> list[str]:
    """``argv`` wrapped in bubblewrap, run in ``JOB_DIR`` holding ``files`` (name -> fd), the
    data folder shown without ``hidden_data`` (paths relative to it), and of each folder named in
    ``listed_data`` only the files ``listed_data`` names in it (a file written there since the
    list was made is not seen)."""
    size = str(disk_mb * 2**20)
    # the job's own mounts first: what is shown under /tmp (a clone, a venv) lands on its tmpfs;
    # sandbox.run builds the command only when bwrap() found the executable
    args = [cast(str, bwrap()), "--perms", "0755", "--tmpfs", "/", "--dev", "/dev", "--proc", "/proc",
            "--perms", "1777", "--size", size, "--tmpfs", "/tmp",
            "--perms", "1777", "--size", size, "--tmpfs", "/dev/shm",
            *_visible(sorted(_shown()), JOB_MOUNTS)]
    for folder in ("", "home", "tmp", "data"):
        args += ["--perms", "0777" if uid is not None else "0755", "--dir", str(JOB_DIR / folder)]
    for name, fd in files.items():
        args += ["--perms", "0644", "--file", str(fd), str(JOB_DIR / name)]
    hidden = {Path(path) for path in hidden_data}
    if data_dir.is_dir():
        for entry in sorted(data_dir.iterdir()):
            if entry.name in WRITABLE_DATA or entry.name.startswith(".") or Path(entry.name) in hidden:
                continue
            if entry.name in listed_data and entry.is_dir():
                args += _listed(data_dir, entry, listed_data)
            else:
                args += ["--ro-bind", str(entry), str(JOB_DIR / "data" / entry.name)]
    args += _covered(data_dir, sorted(path for path in hidden if len(path.parts) > 1
                                      and path.parts[0] not in listed_data))
    args += ["--remount-ro", "/", *_namespaces(), "--die-with-parent", "--new-session",
             "--chdir", str(JOB_DIR)]
    if uid is None:
        return [*args, "--cap-drop", "ALL", *argv]
    # root inside switches to the job's user for good: setpriv drops every capability with it
    return [*args, "--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID",
            "setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--no-new-privs", "--",
            *argv]
