"""The project's set-up files agree with each other."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

from helpers.settings import REPO_ROOT


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~ \[]", requirement.strip(), maxsplit=1)[0].lower()


def test_environment_yml_pins_what_pyproject_pins():
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]
    env = (REPO_ROOT / "environment.yml").read_text()
    pip_section = env[env.index("- pip:"):]
    pip_lines = re.findall(r"^\s+- ([A-Za-z].*[<>=].*)$", pip_section, flags=re.MULTILINE)
    assert sorted(pip_lines) == sorted(project["dependencies"])
    assert {_name(r) for r in pip_lines} >= {
        "jupyterlab", "nltk", "gensim", "scikit-learn", "scipy", "numpy", "pandas",
        "matplotlib", "tqdm", "nbval", "pytest"}
    assert re.search(r"^\s+- python=3\.11$", env, flags=re.MULTILINE)


def _readme_commands() -> list[str]:
    readme = (REPO_ROOT / "README.md").read_text()
    start = readme.index("## Start here")
    section = readme[start:readme.index("\n## ", start + 1)]
    return re.findall(r"```bash\n(.*?)\n\s*```", section, flags=re.DOTALL)


def test_readme_has_two_commands_and_ci_runs_the_test_one():
    commands = [c.strip() for c in _readme_commands()]
    assert len(commands) == 2
    assert "kit fetch" in commands[0] and commands[0].endswith("kit lab")
    assert commands[1].endswith("pytest")
    ci = (REPO_ROOT / ".ci" / "run").read_text().splitlines()
    assert commands[1] in ci


def test_binder_setup():
    post_build = (REPO_ROOT / "postBuild").read_text()
    assert "set -e" in post_build and "kit fetch" in post_build
    start = (REPO_ROOT / "start").read_text()
    assert "PYTHONHASHSEED=0" in start and start.rstrip().endswith('exec "$@"')
    assert not (REPO_ROOT / "binder").exists()
    assert "labpath=work%2F00_" in (REPO_ROOT / "README.md").read_text()


def test_binder_start_seeds_the_workspace_the_badge_opens(tmp_path):
    env = {**os.environ, "KIT_WORK_DIR": str(tmp_path / "work"),
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    started = subprocess.run(["bash", str(REPO_ROOT / "start"), "bash", "-c", "echo $PYTHONHASHSEED"],
                             cwd=REPO_ROOT, env=env, capture_output=True, text=True, check=True)
    assert started.stdout.strip() == "0"
    assert (tmp_path / "work" / "00_data.ipynb").is_file()


def test_readme_maps_every_notebook():
    readme = (REPO_ROOT / "README.md").read_text()
    for notebook in sorted((REPO_ROOT / "solutions").glob("[0-9][0-9]_*.ipynb")):
        assert f"| `{notebook.stem}` |" in readme, notebook.name


def test_the_course_library_never_imports_the_tooling():
    """helpers.* is what notebooks import; helpers.course and the CLI sit on top of it."""
    import ast

    tooling = ("helpers.course", "helpers.cli")
    for path in sorted((REPO_ROOT / "helpers").glob("*.py")):
        if path.stem == "cli":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [f"{node.module}.{a.name}" for a in node.names] if isinstance(node, ast.ImportFrom)
                     else [])
            for name in names:
                assert not name.startswith(tooling), f"{path.name} imports {name}"


def test_pytest_runs_nbval_as_the_tooling_configures_it():
    from helpers.course import config

    pytest_options = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["tool"]["pytest"]
    addopts = pytest_options["ini_options"]["addopts"]
    assert f"-p {config.PLUGIN}" in addopts
    assert f"--nbval-cell-timeout {config.CELL_TIMEOUT}" in addopts
    assert "--nbval-lax" in addopts and "--nbval-current-env" in addopts


def _start_here() -> str:
    readme = (REPO_ROOT / "README.md").read_text()
    start = readme.index("## Start here")
    return " ".join(readme[start:readme.index("\n## ", start + 1)].split())


def _bench_seconds(phase: str, row: str) -> float:
    """Wall seconds of one row of the README's table of the practical's own cost."""
    readme = (REPO_ROOT / "README.md").read_text()
    found = re.search(rf"^\| {phase} \| {re.escape(row)} \| [^|]* \| ([0-9.]+) \|", readme, re.MULTILINE)
    assert found, f"no {phase} {row} row in the README's cost table"
    return float(found.group(1))


def test_start_here_states_what_it_takes_as_measured():
    said = _start_here()
    assert "Linux" in said and "native Windows is not supported" in said and "WSL2" in said
    cold = _bench_seconds("cold", "kit fetch") + _bench_seconds("cold", "all notebooks")
    warm = _bench_seconds("warm", "all notebooks")
    assert f"takes about {round(cold / 60)} minutes" in said
    assert f"a second run about {round(warm / 60)} minutes" in said
    official_mb = 84_125_825 / 1e6  # the official archive (../shared/data/README.md)
    assert f"the {official_mb:.0f} MB IMDB archive" in said
