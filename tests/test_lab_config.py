"""The lab refuses to serve solutions/ (issue #34) and notebooks/ (issue #53): a real Jupyter
server, set up as `kit lab` does."""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from helpers.cli import lab_environment
from helpers.course import config
from helpers.course.student.lab_contents import KitContentsManager
from helpers.settings import REPO_ROOT

START_SECONDS = 90
SOLUTION = config.notebooks_in(config.SOLUTIONS_DIR)[0].name

REFUSED = ["/api/contents/solutions", f"/api/contents/solutions/{SOLUTION}",
           f"/api/contents/solutions/{SOLUTION}?content=0", "/api/contents/solutions/tolerances.csv",
           f"/files/solutions/{SOLUTION}", "/files/solutions/tolerances.csv",
           f"/api/contents/Solutions/{SOLUTION}", f"/api/contents/notebooks/../solutions/{SOLUTION}",
           f"/nbconvert/html/solutions/{SOLUTION}", "/api/contents/tests/test_release.py",
           "/files/tests/test_release.py", "/api/contents/course/rubric.md", "/files/course/rubric.md",
           "/api/contents/notebooks", f"/api/contents/notebooks/{SOLUTION}", f"/files/notebooks/{SOLUTION}",
           f"/nbconvert/html/notebooks/{SOLUTION}", f"/api/contents/NOTEBOOKS/{SOLUTION}"]
SERVED = ["/api/contents", "/api/contents/helpers/course/config.py", "/files/README.md",
          "/api/contents/helpers/course/student/jupyter_config/jupyter_server_config.json"]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _status(url: str, token: str) -> int:
    request = urllib.request.Request(url, headers={"Authorization": f"token {token}"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            response.read()
            return response.status
    except urllib.error.HTTPError as err:
        return err.code


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """A Jupyter server on 127.0.0.1 with the lab's settings, root_dir the repository."""
    token, port = secrets.token_hex(16), _free_port()
    home = tmp_path_factory.mktemp("home")
    env = {**os.environ, **lab_environment(os.environ), "HOME": str(home),
           "JUPYTER_RUNTIME_DIR": str(home / "runtime"), "JUPYTER_DATA_DIR": str(home / "data")}
    command = [sys.executable, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1", f"--port={port}",
               "--ServerApp.port_retries=0", "--allow-root", f"--IdentityProvider.token={token}",
               f"--ServerApp.root_dir={REPO_ROOT}"]
    log = (home / "server.log").open("w")
    server = subprocess.Popen(command, env=env, cwd=home, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_SECONDS
        while True:
            if server.poll() is not None:
                pytest.fail(f"the server stopped: {(home / 'server.log').read_text()[-3000:]}")
            try:
                if _status(f"{base}/api/status", token) == 200:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"no server after {START_SECONDS} s: {(home / 'server.log').read_text()[-3000:]}")
            time.sleep(0.5)
        yield base, token
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()


@pytest.mark.parametrize("path", REFUSED)
def test_the_lab_refuses_the_instructors_folders(lab, path):
    base, token = lab
    assert _status(base + path, token) in (403, 404)


@pytest.mark.parametrize("path", SERVED)
def test_the_lab_serves_the_rest(lab, path):
    base, token = lab
    assert _status(base + path, token) == 200


def test_the_root_listing_names_no_solutions(lab):
    base, token = lab
    request = urllib.request.Request(f"{base}/api/contents", headers={"Authorization": f"token {token}"})
    with urllib.request.urlopen(request, timeout=30) as response:
        names = {item["name"] for item in json.load(response)["content"]}
    assert "helpers" in names and not names & {"solutions", "tests", "runs", "notebooks"}


def _post(url: str, token: str, body: dict) -> int:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                     headers={"Authorization": f"token {token}",
                                              "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            response.read()
            return response.status
    except urllib.error.HTTPError as err:
        return err.code


def test_no_kernel_starts_on_a_released_notebook(lab):
    """What /lab/tree/notebooks/NN.ipynb would ask for once the document opened: a session."""
    base, token = lab
    session = {"path": f"notebooks/{SOLUTION}", "type": "notebook", "name": SOLUTION,
               "kernel": {"name": "python3"}}
    assert _post(f"{base}/api/sessions", token, session) >= 400  # jupyter_server words our 404 as a 500
    request = urllib.request.Request(f"{base}/api/kernels", headers={"Authorization": f"token {token}"})
    with urllib.request.urlopen(request, timeout=30) as response:
        assert json.load(response) == []


def _manager(root: Path) -> KitContentsManager:
    return KitContentsManager(root_dir=str(root))


def test_a_link_into_solutions_is_refused(tmp_path):
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "peek").symlink_to(config.SOLUTIONS_DIR)
    (tmp_path / "work" / "mine.ipynb").write_text("{}")
    manager = _manager(tmp_path)
    assert manager.refuses(f"work/peek/{SOLUTION}") and manager.refuses("work/peek")
    assert not manager.refuses("work/mine.ipynb") and not manager.refuses("work")


def test_a_solutions_folder_of_the_root_is_refused(tmp_path):
    (tmp_path / "solutions").mkdir()
    (tmp_path / "solutions" / "x.ipynb").write_text("{}")
    (tmp_path / "solutions_notes.md").write_text("mine")
    manager = _manager(tmp_path)
    assert manager.refuses("solutions/x.ipynb") and manager.refuses("/solutions/")
    assert not manager.refuses("solutions_notes.md") and not manager.refuses("")


def test_the_released_notebooks_are_refused_and_the_workspace_is_not(tmp_path):
    for folder in ("notebooks", "work"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / SOLUTION).write_text("{}")
    from tornado import web

    manager = _manager(tmp_path)
    assert manager.refuses("notebooks") and manager.refuses(f"/notebooks/{SOLUTION}")
    assert not manager.refuses(f"work/{SOLUTION}")
    with pytest.raises(web.HTTPError) as err:  # no kernel for it
        asyncio.run(manager.get_kernel_path(f"notebooks/{SOLUTION}"))
    assert err.value.status_code == 404
    assert asyncio.run(manager.get_kernel_path(f"work/{SOLUTION}")) == "work"


def test_refused_paths_cannot_be_read_renamed_or_copied(tmp_path):
    asyncio.run(_refused_paths(tmp_path))


async def _refused_paths(tmp_path: Path) -> None:
    from tornado import web

    (tmp_path / "solutions").mkdir()
    (tmp_path / "solutions" / "x.txt").write_text("answer")
    manager = _manager(tmp_path)
    assert not await manager.file_exists("solutions/x.txt") and await manager.is_hidden("solutions/x.txt")
    for attempt in (manager.get("solutions/x.txt"), manager.rename_file("solutions/x.txt", "x.txt"),
                    manager.copy("solutions/x.txt", ""), manager.delete_file("solutions/x.txt")):
        with pytest.raises(web.HTTPError) as err:
            await attempt
        assert err.value.status_code == 404
    assert (tmp_path / "solutions" / "x.txt").read_text() == "answer" and not (tmp_path / "x.txt").exists()
