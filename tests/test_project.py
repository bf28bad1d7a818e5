"""The project's set-up files agree with each other."""

from __future__ import annotations

import itertools
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import markdown_docs
import pytest

from helpers.settings import REPO_ROOT

BENCHMARKS = REPO_ROOT / "docs" / "benchmarks.md"
#: The Markdown files whose commands and links are checked.
DOCUMENTS = ("README.md", "STUDENT_README.md", "docs/instructors.md", "docs/benchmarks.md")


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~ \[]", requirement.strip(), maxsplit=1)[0].lower()


def test_binder_installs_each_package_once_at_its_pinned_version():
    """environment.yml installs Python and pip only, and postBuild the kit with every package
    it needs, once, through the constraints: packages listed in environment.yml would be
    installed twice, the newest in range first, then the pinned version (issue #53)."""
    import yaml

    environment = yaml.safe_load((REPO_ROOT / "environment.yml").read_text())
    assert environment["dependencies"] == ["python=3.11", "pip"]
    post_build = (REPO_ROOT / "postBuild").read_text().splitlines()
    installs = [line for line in post_build if re.match(r"\s*(pip|pip3|conda|mamba|python3? -m pip) ", line)]
    assert installs == ["pip install -c constraints.txt -e ."]


def _pins() -> dict[str, str]:
    """``constraints.txt`` as ``{name: version}``."""
    lines = [line.strip() for line in (REPO_ROOT / "constraints.txt").read_text().splitlines()]
    return {_name(line): line.split("==", 1)[1] for line in lines if line and not line.startswith("#")}


def test_constraints_pin_every_dependency_exactly_within_pyproject_s_ranges():
    from packaging.requirements import Requirement

    lines = [line for line in (REPO_ROOT / "constraints.txt").read_text().splitlines()
             if line.strip() and not line.startswith("#")]
    assert all(re.fullmatch(r"[A-Za-z0-9._-]+==[A-Za-z0-9.+!-]+", line) for line in lines), "only exact pins"
    pins = _pins()
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]
    for text in [*project["dependencies"], *project["optional-dependencies"]["dev"]]:
        requirement = Requirement(text)
        name = requirement.name.lower()
        assert name in pins, f"{name} is not pinned in constraints.txt"
        assert requirement.specifier.contains(pins[name]), f"{name}=={pins[name]} is outside {requirement}"


def test_every_install_goes_through_the_constraints():
    commands = _readme_commands()
    assert all("pip install -c constraints.txt" in command for command in commands)
    assert "pip install -c constraints.txt -e ." in (REPO_ROOT / "postBuild").read_text()


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


def test_the_student_readme_maps_every_notebook_and_the_readme_links_to_its_map():
    students = (REPO_ROOT / "STUDENT_README.md").read_text()
    for notebook in sorted((REPO_ROOT / "solutions").glob("[0-9][0-9]_*.ipynb")):
        assert re.search(rf"^\| `{notebook.stem}` \|.*$", students, re.MULTILINE), notebook.name
    assert "(STUDENT_README.md#notebook-map)" in (REPO_ROOT / "README.md").read_text()


#: The longest run of words two documents may share: a passage longer than a file's name, a
#: heading or a command's description is a copy, which one day says something the other does not.
SHARED_WORDS = 10


@pytest.mark.parametrize("first, second", list(itertools.combinations(DOCUMENTS, 2)),
                         ids=lambda name: Path(name).stem)
def test_each_fact_is_written_in_one_document_and_the_others_link_to_it(first, second):
    copied = markdown_docs.shared_runs((REPO_ROOT / first).read_text(encoding="utf-8"),
                                       (REPO_ROOT / second).read_text(encoding="utf-8"), SHARED_WORDS + 1)
    assert not copied, f"{first} and {second} both say: " + " | ".join(sorted(copied)[:3])


def test_a_copied_passage_is_found_and_a_shared_command_is_not():
    passage = "Each extracted folder keeps a manifest of its files, size, time and sha256."
    command = "```bash\npython3 -m venv .venv && . .venv/bin/activate && pip install -e . && kit fetch\n```"
    assert markdown_docs.shared_runs(f"Intro.\n\n{passage}\n", f"Other words; {passage}", 11)
    assert not markdown_docs.shared_runs(f"A.\n{command}\n", f"B.\n{command}\n", 11)


def test_pytest_runs_nbval_as_the_tooling_configures_it(pytestconfig):
    from helpers.course import config
    from helpers.course.engine import nbval_plugin

    pytest_options = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["tool"]["pytest"]
    addopts = pytest_options["ini_options"]["addopts"]
    assert f"-p {config.PLUGIN}" in addopts
    assert "--nbval" not in addopts, "nbval's options belong in config.NBVAL_OPTIONS"
    # this very run got them from the plugin (unless its command line chose otherwise)
    ours = " ".join(pytestconfig.invocation_params.args)
    assert pytestconfig.getoption("nbval_lax") or "--nbval" in ours
    assert pytestconfig.getoption("nbval_current_env") or "--nbval-kernel-name" in ours
    timeout = pytestconfig.getoption("nbval_cell_timeout")
    assert timeout == config.CELL_TIMEOUT or "--nbval-cell-timeout" in ours
    # a choice the command line makes is left as it made it
    for given in (["--nbval-cell-timeout", "5"], ["--nbval-cell-timeout=5"]):
        args = ["tests", *given]
        nbval_plugin.pytest_load_initial_conftests(pytestconfig, None, args)
        assert args == [*(o for o in config.NBVAL_OPTIONS if "timeout" not in o), "tests", *given]
    args = ["--nbval", "--nbval-kernel-name", "python3", "--sanitize-with", "mine.cfg"]
    nbval_plugin.pytest_load_initial_conftests(pytestconfig, None, args)
    assert args[:-5] == [f"--nbval-cell-timeout={config.CELL_TIMEOUT}"]


def _start_here(name: str = "README.md") -> str:
    readme = (REPO_ROOT / name).read_text()
    start = readme.index("## Start here")
    return " ".join(readme[start:readme.index("\n## ", start + 1)].split())


def _bench_seconds(phase: str, row: str) -> float:
    """Wall seconds of one row of the table of the practical's own cost (docs/benchmarks.md)."""
    table = BENCHMARKS.read_text()
    found = re.search(rf"^\| {phase} \| {re.escape(row)} \| [^|]* \| ([0-9.]+) \|", table, re.MULTILINE)
    assert found, f"no {phase} {row} row in {BENCHMARKS.name}'s cost table"
    return float(found.group(1))


def test_the_student_readme_states_what_it_takes_as_measured_and_the_readme_links_to_it():
    students = (REPO_ROOT / "STUDENT_README.md").read_text()
    start = students.index("## What it takes")
    said = " ".join(students[start:students.index("\n## ", start + 1)].split())
    assert "Linux" in said and "native Windows is not supported" in said and "WSL2" in said
    assert "## The practical's own cost" in BENCHMARKS.read_text()
    cold = _bench_seconds("cold", "kit fetch") + _bench_seconds("cold", "all notebooks")
    warm = _bench_seconds("warm", "all notebooks")
    assert f"takes about {round(cold / 60)} minutes" in said
    assert f"a second run about {round(warm / 60)} minutes" in said
    official_mb = 84_125_825 / 1e6  # the official archive (../shared/data/README.md)
    assert f"the {official_mb:.0f} MB IMDB archive" in said
    assert "(STUDENT_README.md#what-it-takes)" in _start_here()


def test_the_student_readme_installs_and_runs_as_the_readme_does():
    """STUDENT_README.md (the student copy's README) has the README's first command, and only it."""
    students = markdown_docs.bash_blocks(_start_here_text("STUDENT_README.md"))
    assert [block.strip() for block in students] == [_readme_commands()[0].strip()]
    text = (REPO_ROOT / "STUDENT_README.md").read_text()
    assert "pytest" not in text and "For instructors" not in text
    from helpers.course.notebook.student_copy import FOLDER_PLACEHOLDER, REPO_PLACEHOLDER

    assert f"mybinder.org/v2/gh/{REPO_PLACEHOLDER}/" in text
    assert f"git clone https://github.com/{REPO_PLACEHOLDER}.git && {FOLDER_PLACEHOLDER}" in text


def test_the_student_readme_says_what_to_hand_in_what_earns_marks_and_what_comes_back():
    """Each fact as the kit does it: the copy graded, the stub's and the answer cell's words
    as the release writes them, and the feedback's formats as grading writes them."""
    from helpers import settings
    from helpers.course.classroom import layout
    from helpers.course.notebook import release

    text = " ".join((REPO_ROOT / "STUDENT_README.md").read_text(encoding="utf-8").split())
    hand_in = text[text.index("**What to hand in.**"):text.index("**What earns marks.**")]
    assert f"`{settings.work_dir().relative_to(REPO_ROOT)}/NN_topic.ipynb`" in hand_in
    assert "`kit check NN`" in hand_in and "written answer" in hand_in
    marks = text[text.index("**What earns marks.**"):text.index("**What comes back.**")]
    stub = release.stub_source("def f():\n    ### BEGIN SOLUTION\n    pass\n    ### END SOLUTION\n", "N.M", 2)
    stub_line = stub.splitlines()[1].strip().replace("2 points", "k points")
    assert f"`{stub_line}`" in marks
    assert f"`{release.ANSWER_PLACEHOLDER}`" in marks
    released = release.released_answer(_answer_cell(), "x").splitlines()
    note = next(line for line in released if line.startswith("*Written answer"))
    note = note.replace("2 points", "k points")
    assert note.rstrip(".*") + "*" in marks  # the README's sentence goes on after the cell's words
    back = text[text.index("**What comes back.**"):]
    html, md = layout.feedback_paths(Path("class"), "student", "01_naive_bayes")
    assert (html.suffix, md.suffix) == (".html", ".md") and "(HTML and Markdown)" in back


def _answer_cell():
    import nbformat

    cell = nbformat.v4.new_markdown_cell("**Q?**\n\n=== BEGIN ANSWER ===\nx\n=== END ANSWER ===")
    cell.metadata["kit"] = {"answer": "1.a", "points": 2}
    return cell


def _start_here_text(name: str) -> str:
    readme = (REPO_ROOT / name).read_text()
    start = readme.index("## Start here")
    return readme[start:readme.index("\n## ", start + 1)]


def test_the_readmes_name_real_kit_commands_and_link_to_what_exists():
    """Every `kit SUBCOMMAND` the READMEs and docs name is one; every relative link (and anchor) exists."""
    from helpers.cli import build_parser

    real = markdown_docs.parser_commands(build_parser())
    assert {"fetch", "lab", "check", "work", "release", "grade"} <= real
    students = (REPO_ROOT / "STUDENT_README.md").read_text()
    assert {"fetch", "lab", "check", "work"} <= markdown_docs.kit_commands(students)
    for name in DOCUMENTS:
        document = REPO_ROOT / name
        text = document.read_text(encoding="utf-8")
        named = markdown_docs.kit_commands(text)
        assert not named - real, f"{name} names `kit {', '.join(sorted(named - real))}`, not a kit command"
        for path, anchor in markdown_docs.relative_links(text):
            target = (document.parent / path).resolve() if path else document
            assert target.is_file(), f"{name} links to {path}, which does not exist"
            if anchor and target.suffix == ".md":
                assert anchor in markdown_docs.anchors(target.read_text(encoding="utf-8")), \
                    f"{name} links to {path}#{anchor}, which is no heading there"


#: The kit's packages: each docstring lists its modules.
PACKAGES = ("helpers", "helpers.course", "helpers.course.notebook", "helpers.course.engine",
            "helpers.course.student", "helpers.course.classroom")


def _modules() -> dict[str, Path]:
    """Every module of the kit by dotted name (``helpers``, ``helpers.course.engine.grading``, ...)."""
    found = {}
    for path in sorted((REPO_ROOT / "helpers").rglob("*.py")):
        parts = path.relative_to(REPO_ROOT).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _imports(path: Path, modules: dict[str, Path]) -> set[str]:
    """The kit's modules ``path`` imports, anywhere in it (a function's import included)."""
    import ast

    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name in modules)
        elif isinstance(node, ast.ImportFrom) and node.module:
            named = {f"{node.module}.{alias.name}" for alias in node.names}
            found.update(name for name in named | {node.module} if name in modules)
    return found


def _import_graph() -> dict[str, set[str]]:
    """Each of the kit's modules -> the kit's other modules it imports."""
    modules = _modules()
    return {name: _imports(path, modules) - {name} for name, path in modules.items()}


def test_each_package_docstring_lists_every_module():
    import importlib

    for name in PACKAGES:
        package = importlib.import_module(name)
        folder = Path(package.__file__).parent
        missing = [path.stem for path in sorted(folder.glob("*.py"))
                   if path.stem != "__init__" and f"``{path.stem}``" not in package.__doc__]
        assert not missing, f"{package.__name__}'s docstring does not list {missing}"


def test_no_two_modules_import_each_other_even_indirectly():
    graph = _import_graph()
    packages = set(PACKAGES)  # a package imports its own modules on purpose

    def reaches(start: str, goal: str) -> bool:
        seen, todo = set(), [start]
        while todo:
            for nxt in graph[todo.pop()] - seen - packages:
                if nxt == goal:
                    return True
                seen.add(nxt)
                todo.append(nxt)
        return False

    cycles = sorted({tuple(sorted((a, b))) for a in graph for b in graph[a] - packages if reaches(b, a)})
    assert not cycles, f"modules in an import cycle: {cycles}"


#: The kit's layers, top first: a module may import its own layer's modules and any layer's
#: below it, never one above, nor a sibling in the same row (``student`` and ``classroom``
#: stand side by side). Each name is a module or a package with everything in it.
LAYERS = (
    ("helpers.cli",),
    ("helpers.course.student", "helpers.course.classroom"),
    ("helpers.course.engine",),
    ("helpers.course.notebook",),
    ("helpers.course.config", "helpers.course.arguments", "helpers.course"),
    ("helpers",),
)

#: Rows whose members may import each other: the tooling's shared modules, and the library.
CORE = {*LAYERS[-2], *LAYERS[-1]}


def _place(module: str) -> tuple[int, str]:
    """(layer number, the name in LAYERS it falls under): the longest name that holds it."""
    found = [(len(name), row, name) for row, names in enumerate(LAYERS) for name in names
             if module == name or module.startswith(name + ".")]
    _, row, name = max(found)
    return row, name


def layer_violations(graph: dict[str, set[str]]) -> list[str]:
    """The imports in ``graph`` (module -> modules it imports) that break LAYERS."""
    found = []
    for module, imported in sorted(graph.items()):
        row, name = _place(module)
        for target in sorted(imported - set(PACKAGES)):
            target_row, target_name = _place(target)
            if target_row < row or (target_row == row and target_name != name
                                    and name not in CORE and target_name not in CORE):
                found.append(f"{module} imports {target}")
    return found


def test_every_import_keeps_to_the_layers():
    graph = _import_graph()
    assert layer_violations(graph) == []


def test_the_layer_contract_fails_on_an_upward_or_sideways_import():
    graph = _import_graph()
    planted = {**graph, "helpers.text": graph["helpers.text"] | {"helpers.course.engine.grading"},
               "helpers.course.engine.verdict": graph["helpers.course.engine.verdict"] | {"helpers.cli"},
               "helpers.course.student.check": graph["helpers.course.student.check"]
               | {"helpers.course.classroom.gradebook"}}
    assert layer_violations(planted) == [
        "helpers.course.engine.verdict imports helpers.cli",
        "helpers.course.student.check imports helpers.course.classroom.gradebook",
        "helpers.text imports helpers.course.engine.grading"]


def test_no_module_reads_a_verdict_back_from_text():
    """The plugin reports cells as data (verdict.CellResult); only verdict.py words a verdict."""
    for name, path in _modules().items():
        text = path.read_text(encoding="utf-8")
        assert "junitxml" not in text and "xml.etree" not in text, f"{name} reads an XML report"
        if name != "helpers.course.engine.verdict":
            assert '"blocked by' not in text and "f\"blocked by" not in text, f"{name} words a verdict"


def test_one_module_owns_the_class_folder_layout():
    from helpers.course.classroom import layout

    names = [layout.RECORDS_DIR, layout.GRADES_FILE, layout.SUMMARY_FILE, layout.SHEET_PREFIX]
    for name, path in _modules().items():
        if name != "helpers.course.classroom.layout":
            text = path.read_text(encoding="utf-8")
            assert not [n for n in names if f'"{n}' in text], f"{name} spells out a class folder's file names"


def test_every_cache_goes_through_storage_cached():
    """Only the Doc2Vec training corpus, a file gensim reads by path, and a model's document
    vectors, named by the model's checksum after it is loaded, are stored by hand."""
    for name, path in _modules().items():
        calls = re.findall(r"storage\.(?:load|store)\(", path.read_text(encoding="utf-8"))
        assert not calls or name == "helpers.embeddings", f"{name} caches without storage.cached"
    corpus = (REPO_ROOT / "helpers" / "embeddings.py").read_text(encoding="utf-8")
    # corpus_file's two files, and _document_vectors' load and store
    assert len(re.findall(r"storage\.(?:load|store)\(", corpus)) == 6


def test_the_layout_table_names_every_package_and_its_modules():
    table = (REPO_ROOT / "docs" / "instructors.md").read_text(encoding="utf-8")
    for name in PACKAGES[1:]:
        folder = REPO_ROOT / Path(*name.split("."))
        row = re.search(rf"^\| `{folder.relative_to(REPO_ROOT)}/` \|.*$", table, re.MULTILINE)
        assert row, f"docs/instructors.md's layout has no row for {name}"
        missing = [path.stem for path in sorted(folder.glob("*.py"))
                   if path.stem != "__init__" and f"`{path.stem}`" not in row.group(0)]
        assert not missing, f"the layout's row for {name} does not name {missing}"
