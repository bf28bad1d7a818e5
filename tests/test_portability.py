"""The kit runs where its users are, not only on Linux: its commands import and answer without
the POSIX-only modules (as on native Windows), and grading, which needs Linux's sandbox, says so
in one line.

(Outputs under other BLAS kernels are held by solutions/tolerances.csv, measured by
``python -m helpers.course.notebook.tolerances`` and tied to the current outputs by
tests/test_tolerances.py; docs/instructors.md says how to prepare a notebook under another
kernel yourself.)
"""

from __future__ import annotations

import subprocess
import sys

#: Imports what a student's commands import, with the POSIX-only modules hidden (as on
#: native Windows), and asks for ``kit --help``.
WITHOUT_POSIX = ("import sys\nsys.modules.update(fcntl=None, pwd=None)\n"
                 "import helpers.data, helpers.storage\nfrom helpers.cli import main\nmain(['--help'])\n")


def test_the_kit_imports_and_answers_help_without_posix_only_modules():
    shown = subprocess.run([sys.executable, "-c", WITHOUT_POSIX], capture_output=True, text=True,
                           timeout=120)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith("usage: kit")


def test_grading_elsewhere_than_linux_says_so_in_one_line(tmp_path, monkeypatch, capsys):
    from helpers.cli import main

    monkeypatch.setattr(sys, "platform", "win32")
    assert main(["grade", str(tmp_path)]) == 1
    said = capsys.readouterr().err
    assert said.startswith("kit: `kit grade` needs Linux") and said.count("\n") == 1
