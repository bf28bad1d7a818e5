"""`kit check`: a stub, a correct answer and a wrong one, as the student reads them."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from helpers.cli import main
from helpers.course import check, release
from helpers.errors import KitError

FIXTURE = Path(__file__).parent / "fixtures" / "solutions" / "00_fixture.ipynb"


def test_check_says_per_exercise_what_passes(tmp_path):
    solution = nbformat.read(FIXTURE, as_version=4)
    released = tmp_path / "notebooks" / FIXTURE.name
    released.parent.mkdir()
    nbformat.write(release.release_notebook(solution), released)
    answers = {"stub": release.release_notebook(solution), "correct": solution}
    wrong = nbformat.from_dict(answers["stub"])
    wrong.cells[1].source = "def add(a, b):\n    return a - b"
    answers["wrong"] = wrong
    lines = {}
    for name, nb in answers.items():
        copy = tmp_path / name / FIXTURE.name
        copy.parent.mkdir()
        nbformat.write(nb, copy)
        lines[name] = [check.describe(*row) for row in check.check_notebook(copy, released, timeout=120)]
    assert lines["correct"] == ["✓ 0.1", "✓ 0.2"]
    assert lines["stub"] == ["✗ 0.1  not done yet", "✗ 0.2  not done yet"]
    assert lines["wrong"][0].startswith("✗ 0.1  output differs from the reference: stdout, line 1: -1")
    assert lines["wrong"][1] == "✗ 0.2  not done yet"


def test_check_names_what_is_missing(tmp_path, capsys):
    with pytest.raises(KitError, match="No notebook 07 in your workspace"):
        check.working_copy("07", tmp_path)
    with pytest.raises(KitError, match="not one of the released notebooks"):
        check.released_for(tmp_path / "99_mine.ipynb")
    (tmp_path / "broken.ipynb").write_text("{not json")
    with pytest.raises(KitError, match="not a readable notebook"):
        check.check_notebook(tmp_path / "broken.ipynb", FIXTURE)
    assert main(["check", str(tmp_path / "absent.ipynb")]) == 1
    assert "not one of the released notebooks" in capsys.readouterr().err
