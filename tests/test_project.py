"""The project's set-up files agree with each other."""

from __future__ import annotations

import re
import tomllib

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
    assert "labpath=notebooks%2F00_" in (REPO_ROOT / "README.md").read_text()


def test_readme_maps_every_notebook():
    readme = (REPO_ROOT / "README.md").read_text()
    for notebook in sorted((REPO_ROOT / "solutions").glob("[0-9][0-9]_*.ipynb")):
        assert f"| `{notebook.stem}` |" in readme, notebook.name
