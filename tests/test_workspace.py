"""The student's workspace: seeded once from notebooks/, never overwritten; `kit lab` serves it."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook, new_output

from helpers import settings
from helpers.cli import lab_arguments, main
from helpers.course import config
from helpers.course.student import workspace
from helpers.errors import KitError
from helpers.settings import REPO_ROOT

LAB_START_SECONDS = 300  # a loaded machine starts JupyterLab slowly; this only bounds a hang


def _release(path: Path, text: str) -> None:
    """A released notebook: one executed cell printing ``text``."""
    cell = new_code_cell(f"print({text!r})", execution_count=3,
                         outputs=[new_output("stream", name="stdout", text=text + "\n")])
    nbformat.write(new_notebook(cells=[cell]), path)


@pytest.fixture
def released(tmp_path) -> Path:
    folder = tmp_path / "notebooks"
    folder.mkdir()
    for name in ("00_data.ipynb", "01_naive_bayes.ipynb"):
        _release(folder / name, f"release 1 of {name}")
    return folder


def _source(path: Path) -> str:
    return nbformat.read(path, as_version=4).cells[0].source


def test_seed_copies_what_is_missing_and_never_overwrites(tmp_path, released):
    work = tmp_path / "work"
    assert set(workspace.seed(work, released).values()) == {workspace.COPIED}
    (work / "01_naive_bayes.ipynb").write_text("my work")
    (work / "00_data.ipynb").unlink()
    states = workspace.seed(work, released)
    assert states == {"00_data.ipynb": workspace.COPIED, "01_naive_bayes.ipynb": workspace.YOURS}
    assert (work / "01_naive_bayes.ipynb").read_text() == "my work"


def test_a_newer_release_is_offered_not_forced(tmp_path, released):
    work = tmp_path / "work"
    workspace.seed(work, released)
    (work / "01_naive_bayes.ipynb").write_text("my work")
    _release(released / "01_naive_bayes.ipynb", "release 2")
    states = workspace.seed(work, released)
    assert "kit work --update 01" in states["01_naive_bayes.ipynb"]
    assert (work / "01_naive_bayes.ipynb").read_text() == "my work"

    moved = workspace.update(["1"], work, released)
    backup = moved["01_naive_bayes.ipynb"]
    assert backup.parent == work / workspace.BACKUPS and backup.read_text() == "my work"
    assert _source(work / "01_naive_bayes.ipynb") == "print('release 2')"
    assert workspace.seed(work, released)["01_naive_bayes.ipynb"] == workspace.YOURS
    assert config.notebooks_in(work) == [work / "00_data.ipynb", work / "01_naive_bayes.ipynb"]


def test_working_copies_start_without_outputs_and_the_release_keeps_them(tmp_path, released):
    work = tmp_path / "work"
    workspace.seed(work, released)
    workspace.update(["01"], work, released)
    for name in ("00_data.ipynb", "01_naive_bayes.ipynb"):
        cell = nbformat.read(work / name, as_version=4).cells[0]
        assert cell.outputs == [] and cell.execution_count is None, name
        assert cell.source == _source(released / name)
        assert nbformat.read(released / name, as_version=4).cells[0].outputs, "the release keeps its outputs"


def test_no_shipped_working_copy_shows_a_checked_output(tmp_path):
    work = tmp_path / "work"
    workspace.seed(work)
    for copy in config.notebooks_in(work):
        notebook = nbformat.read(copy, as_version=4)
        shown = [cell.id for cell in notebook.cells if cell.cell_type == "code"
                 and (cell.outputs or cell.execution_count is not None)]
        assert shown == [], f"{copy.name} shows outputs in cells {shown}"
    released = nbformat.read(config.NOTEBOOKS_DIR / copy.name, as_version=4)
    assert any(cell.get("outputs") for cell in released.cells), "notebooks/ keeps the reference outputs"


def test_a_copy_made_meanwhile_is_never_overwritten(tmp_path, released):
    (tmp_path / "work").mkdir()
    mine = tmp_path / "work" / "00_data.ipynb"
    mine.write_text("mine")
    with pytest.raises(FileExistsError):
        workspace.blank_copy(released / "00_data.ipynb", mine)
    assert mine.read_text() == "mine"


def test_update_needs_existing_notebooks(tmp_path, released):
    with pytest.raises(KitError, match="Name the notebooks"):
        workspace.update([], tmp_path / "work", released)
    with pytest.raises(KitError, match="numbered 42"):
        workspace.update(["42"], tmp_path / "work", released)


def test_kit_work_seeds_the_configured_workspace(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("KIT_WORK_DIR", str(tmp_path / "mine"))
    assert main(["work"]) == 0
    seeded = sorted(p.name for p in (tmp_path / "mine").glob("*.ipynb"))
    assert seeded == [p.name for p in config.notebooks_in(config.NOTEBOOKS_DIR)]
    assert "copied from notebooks/" in capsys.readouterr().out


def test_help_loads_no_heavy_library():
    code = ("import sys; from helpers import cli; cli.build_parser().format_help(); "
            "print(sorted({'pandas', 'gensim', 'sklearn', 'nbformat'} & set(sys.modules)))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert loaded.stdout.strip() == "[]"


def test_version_and_unknown_options(capsys):
    with pytest.raises(SystemExit) as shown:
        main(["--version"])
    assert shown.value.code == 0 and capsys.readouterr().out.startswith("kit ")
    with pytest.raises(SystemExit) as refused:
        main(["info", "--no-browser"])
    assert refused.value.code == 2 and "unrecognized arguments: --no-browser" in capsys.readouterr().err


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _get(url: str, token: str) -> tuple[int, bytes]:
    request = urllib.request.Request(url, headers={"Authorization": f"token {token}"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.status, response.read()


def test_kit_lab_runs_headless_with_jupyter_options_and_serves_the_workspace(tmp_path):
    port, token = _free_port(), "kit-test-token"
    env = {**os.environ, "KIT_WORK_DIR": str(tmp_path / "work"), "JUPYTER_RUNTIME_DIR": str(tmp_path / "rt")}
    for folder in ("data", "notebooks", "solutions"):  # served from tmp_path, the workspace's parent
        (tmp_path / folder).mkdir()
    log = tmp_path / "lab.log"
    with log.open("w") as output:
        lab = subprocess.Popen([sys.executable, "-m", "helpers.cli", "lab", "--no-browser",
                                "--port", str(port), "--allow-root", f"--IdentityProvider.token={token}"],
                               env=env, stdout=output, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline, status = time.monotonic() + LAB_START_SECONDS, None
        while status is None and time.monotonic() < deadline and lab.poll() is None:
            try:
                status, _ = _get(f"http://127.0.0.1:{port}/lab", token)
            except OSError:  # not listening yet, or a slow first answer (URLError, TimeoutError)
                time.sleep(1)
        assert status == 200, f"JupyterLab did not answer:\n{log.read_text()[-2000:]}"
        _, listing = _get(f"http://127.0.0.1:{port}/api/contents/work", token)
        served = sorted(item["name"] for item in json.loads(listing)["content"] if item["type"] == "notebook")
        assert served == [p.name for p in config.notebooks_in(config.NOTEBOOKS_DIR)]
        _, listing = _get(f"http://127.0.0.1:{port}/api/contents/", token)
        shown = {item["name"] for item in json.loads(listing)["content"]}
        assert {"work", "data"} <= shown and not shown & {"notebooks", "solutions"}, shown
    finally:
        if lab.poll() is None:
            os.killpg(lab.pid, 15)
            lab.wait(timeout=60)


def test_kit_lab_serves_the_repository_and_opens_the_workspace_inside_it(tmp_path):
    assert lab_arguments(REPO_ROOT / "work") == [
        f"--ServerApp.root_dir={REPO_ROOT}", "--LabApp.default_url=/lab/tree/work"]
    assert lab_arguments(tmp_path / "mine") == [
        f"--ServerApp.root_dir={tmp_path}", "--LabApp.default_url=/lab/tree/mine"]


def test_a_garbled_seed_record_costs_nothing_but_a_notice(tmp_path, released):
    work = tmp_path / "work"
    workspace.seed(work, released)
    (work / workspace.SEEDED_FILE).write_bytes(b"\xff\xfe not json")
    assert set(workspace.seed(work, released).values()) == {workspace.YOURS}
    record = json.loads((work / workspace.SEEDED_FILE).read_text())
    assert record.keys() == {"00_data.ipynb", "01_naive_bayes.ipynb"}


@pytest.mark.parametrize("inside", ["", "notebooks", "solutions", "notebooks/mine", "helpers"])
def test_a_workspace_in_the_kit_s_own_folders_is_refused(inside, monkeypatch):
    monkeypatch.setenv("KIT_WORK_DIR", str(REPO_ROOT / inside))
    with pytest.raises(KitError, match="is the kit's own folder"):
        settings.work_dir()


def test_a_workspace_of_its_own_is_taken_as_given(tmp_path, monkeypatch):
    monkeypatch.setenv("KIT_WORK_DIR", str(tmp_path / "mine"))
    assert settings.work_dir() == tmp_path / "mine"
    monkeypatch.delenv("KIT_WORK_DIR")
    assert settings.work_dir() == REPO_ROOT / "work"


def test_a_reader_that_stops_early_gets_no_traceback(tmp_path):
    """`kit work | head -1`: the pipe closes before kit writes; kit ends quietly."""
    env = {**os.environ, "KIT_WORK_DIR": str(tmp_path / "work")}
    kit = subprocess.Popen([sys.executable, "-m", "helpers.cli", "work"], env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    kit.stdout.close()  # before Python has even started: its first print meets a closed pipe
    _, err = kit.communicate(timeout=120)
    assert b"Traceback" not in err and b"BrokenPipe" not in err, err.decode()
    assert kit.returncode == 1
    assert config.notebooks_in(tmp_path / "work"), "the work itself was done"
