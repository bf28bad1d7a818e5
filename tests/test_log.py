"""One channel for diagnostics: the ``kit`` logger on stderr, its level set by ``kit -q``/``-v``."""

from __future__ import annotations

import ast

import pytest

from helpers import files, log
from helpers.cli import build_parser
from helpers.settings import REPO_ROOT

#: Where ``print`` is the output itself, not a diagnostic: the command line; ``check()``'s
#: verdict and the kernel's notice, shown in the student's notebook; ``kit check``'s per-copy
#: lines (its report on stdout); the tolerance tool's own ``__main__``; the script that
#: bubblewrap runs inside the sandbox.
PRINTS_ALLOWED = {"helpers/cli.py", "helpers/course/student/check.py", "helpers/course/student/kernel.py",
                  "helpers/course/notebook/tolerances.py", "helpers/course/engine/bubblewrap.py"}


@pytest.fixture
def level():
    yield
    log.set_level(log.NORMAL)


def test_a_library_diagnostic_reaches_stderr_as_one_line(tmp_path, capsys, level):
    bad = tmp_path / "cache.npz"
    bad.write_text("garbled")
    aside = files.set_aside(bad, "is not a cache")
    said = capsys.readouterr()
    assert said.out == ""
    assert said.err == f"cache.npz is not a cache; set aside as {aside.name}, and computed again.\n"


def test_quiet_keeps_warnings_and_drops_what_the_kit_is_doing(capsys, level):
    log.set_level(log.QUIET)
    log.LOGGER.info("preparing 04")
    log.LOGGER.warning("no sandbox")
    assert capsys.readouterr().err == "no sandbox\n"
    log.set_level(log.VERBOSE)
    log.LOGGER.debug("details")
    assert capsys.readouterr().err == "details\n"


@pytest.mark.parametrize(("argv", "expected"), [(["info"], log.NORMAL), (["-q", "info"], log.QUIET),
                                                (["--verbose", "info"], log.VERBOSE)])
def test_the_command_line_sets_the_level(argv, expected):
    assert build_parser().parse_args(argv).log_level == expected


def test_quiet_and_verbose_exclude_each_other(capsys):
    with pytest.raises(SystemExit):
        build_parser().parse_args(["-q", "-v", "info"])
    assert "not allowed with" in capsys.readouterr().err


def test_no_module_below_the_command_line_prints():
    printing = set()
    for path in sorted((REPO_ROOT / "helpers").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        calls = (node for node in ast.walk(tree) if isinstance(node, ast.Call))
        if any(getattr(call.func, "id", None) == "print" for call in calls):
            printing.add(path.relative_to(REPO_ROOT).as_posix())
    assert printing <= PRINTS_ALLOWED, f"use helpers.log.LOGGER in {printing - PRINTS_ALLOWED}"
