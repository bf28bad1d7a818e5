"""`kit check`: a stub, a correct answer and a wrong one, as the student reads them."""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import psutil
import pytest
from conftest import marked_processes

from helpers import settings
from helpers.cli import main
from helpers.course import config
from helpers.course.engine import nbval_run
from helpers.course.engine.verdict import Status, Verdict
from helpers.course.engine.wording import describe
from helpers.course.notebook import release
from helpers.course.notebook.cells import exercise_id, exercises
from helpers.course.notebook.compare import Difference
from helpers.course.student import check, progress, workspace
from helpers.errors import KitError
from helpers.settings import LAB_SESSION_ENV, REPO_ROOT

FIXTURE = Path(__file__).parent / "fixtures" / "solutions" / "00_fixture.ipynb"


@pytest.mark.kernel
@pytest.mark.slow
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
        lines[name] = [describe(verdict) for verdict in check.check_notebook(copy, released, timeout=120)]
    assert lines["correct"] == ["✓ 0.1", "✓ 0.2"]
    assert lines["stub"] == ["✗ 0.1  not done yet", "✗ 0.2  not done yet"]
    assert lines["wrong"][0] == (
        "✗ 0.1  Fixture practical\n"
        "    output differs from the reference: stdout, line 1: -1 where 5 was expected "
        "(must match exactly)\n"
        "    expected (reference): 5\n"
        "    got (your output):    -1")
    assert lines["wrong"][1] == "✗ 0.2  not done yet"


@pytest.mark.kernel
@pytest.mark.slow
def test_check_finds_a_retyped_exercise_by_its_function_and_names_a_deleted_one(tmp_path):
    """The exercise cell deleted and retyped in a new cell: checked there, with a note (as
    check("0.1") in the lab passes it); deleted with nothing in its place: the note says so."""
    solution = nbformat.read(FIXTURE, as_version=4)
    released = tmp_path / "notebooks" / FIXTURE.name
    released.parent.mkdir()
    nbformat.write(release.release_notebook(solution), released)
    retyped = release.release_notebook(solution)
    del retyped.cells[1]
    retyped.cells.insert(1, nbformat.v4.new_code_cell("def add(a, b):\n    return b + a"))
    deleted = release.release_notebook(solution)
    del deleted.cells[1]
    lines = {}
    for name, nb in (("retyped", retyped), ("deleted", deleted)):
        copy = tmp_path / name / FIXTURE.name
        copy.parent.mkdir()
        nbformat.write(nb, copy)
        lines[name] = describe(check.check_notebook(copy, released, timeout=120)[0])
    assert lines["retyped"] == ("✓ 0.1\n    its exercise cell is not in your notebook: checked in your own "
                                "cell that defines add")
    assert lines["deleted"] == ("✗ 0.1  not done yet\n    its exercise cell is not in your notebook "
                                "(deleted?), and no cell of yours defines add: copy the cell back from "
                                "the released notebook in notebooks/")


def test_check_names_what_is_missing(tmp_path, capsys):
    with pytest.raises(KitError, match="No notebook '07' in your workspace"):
        check.working_copy("07", tmp_path)
    with pytest.raises(KitError, match="not one of the released notebooks"):
        check.released_for(tmp_path / "99_mine.ipynb")
    (tmp_path / "broken.ipynb").write_text("{not json")
    with pytest.raises(KitError, match="not a readable notebook"):
        check.check_notebook(tmp_path / "broken.ipynb", FIXTURE)
    assert main(["check", str(tmp_path / "absent.ipynb")]) == 1
    assert "not one of the released notebooks" in capsys.readouterr().err


@pytest.mark.kernel
@pytest.mark.slow
def test_an_error_shows_where_it_was_raised_and_the_table_counts_each_kind(tmp_path):
    solution = nbformat.read(FIXTURE, as_version=4)
    notebooks = _released(solution, tmp_path)
    raising = release.release_notebook(solution)
    raising.cells[1].source = "def add(a, b):\n    total = a + b\n    return total / 0"
    work = tmp_path / "work"
    work.mkdir()
    nbformat.write(raising, work / FIXTURE.name)
    nbformat.write(solution, work / "mine.ipynb")  # no release of that name: not checked
    found = check.check_workspace(config.notebooks_in(work) + [work / "mine.ipynb"], timeout=120,
                                  notebooks=notebooks)
    assert list(found) == [FIXTURE.name]
    assert describe(found[FIXTURE.name][0]) == (
        "✗ 0.1  Fixture practical\n    ZeroDivisionError: division by zero "
        "(in add, line 3: return total / 0)")
    table = check.progress(found)
    assert table.loc[FIXTURE.name].to_dict() == {
        "exercises": 2, "passed": 0, "not done": 1, "blocked": 0, "failed": 1}
    assert list(table.columns) == ["exercises", "passed", "not done", "blocked", "failed"]


@pytest.mark.kernel
@pytest.mark.slow
def test_kit_check_on_a_catalogued_mistake_in_a_course_notebook(tmp_path, monkeypatch, capsys, corpora):
    from test_mistakes import MISTAKES

    work = tmp_path / "work"
    workspace.seed(work)
    copy = work / "03_significance.ipynb"
    nb = nbformat.read(copy, as_version=4)
    solved = {exercise_id(c): c.source for c in
              nbformat.read(config.SOLUTIONS_DIR / copy.name, as_version=4).cells}
    mistake = MISTAKES["3.1"]["the Monte Carlo formula (s + 1) / (R + 1) for the exact test"]
    for cell in nb.cells:
        if exercise_id(cell) == "3.1":
            cell.source = mistake
        elif exercise_id(cell) == "3.2":
            cell.source = solved["3.2"]
    nbformat.write(nb, copy)
    monkeypatch.setenv("KIT_WORK_DIR", str(work))
    monkeypatch.setattr(nbval_run, "on_terminal", lambda: True)  # the bar is for a terminal only
    assert main(["check", "03"]) == 1, "an exercise that does not pass is a failing exit status"
    said = capsys.readouterr()
    cells = sum(cell.cell_type == "code" for cell in nb.cells)
    assert "kit: 1 of 2 exercises do not pass yet." in said.err
    assert f"{cells}/{cells}" in said.err, f"no progress bar over the {cells} cells:\n{said.err[-500:]}"
    assert said.out.startswith("03_significance.ipynb: running it in a fresh kernel")
    verdicts, _, table = said.out.partition("\n\n")
    shown = verdicts.splitlines(keepends=True)[1:]
    # on a machine whose libraries differ from the reference's, a line names both: not this test's
    assert "".join(line for line in shown if not line.lstrip().startswith("(reference outputs")) + "\n" == \
        CATALOGUED_MISTAKE_03
    assert _row(table, copy.name) == [copy.name, "2", "1", "0", "0", "1", "0", "1/2", "0/4", "this", "run"]


def test_the_libraries_that_wrote_the_reference_stand_on_a_line_of_their_own():
    verdict = Verdict("1.1", Status.FAILED, "(the one line)", where="Title", position=1,
                      difference=Difference(1, "1", "2", "2 where 1 was expected", "stdout"),
                      environments=("reference outputs written with: openblas Haswell",
                                    "this run uses: openblas Prescott"))
    assert describe(verdict) == (
        "✗ 1.1  Title\n    output differs from the reference: stdout, line 1: 2 where 1 was expected\n"
        "    expected (reference): 1\n    got (your output):    2\n"
        "    (reference outputs written with: openblas Haswell; this run uses: openblas Prescott)")


CATALOGUED_MISTAKE_03 = """\
03_significance.ipynb: 1/2 exercises pass the visible checks (grading also runs hidden ones)
  ✗ 3.1  The lecture's worked example
      output differs from the reference: stdout, line 2: 0.04615 where 0.03125 was expected \
(must match exactly)
      expected (reference): 2 of 64 swap patterns are at least as extreme: p = 2/64 = 0.03125
      got (your output):    2 of 64 swap patterns are at least as extreme: p = 2/64 = 0.04615
  ✓ 3.2
"""


def _released(solution: nbformat.NotebookNode, tmp_path: Path) -> Path:
    """The release of ``solution`` in a ``notebooks`` folder of its own."""
    notebooks = tmp_path / "notebooks"
    notebooks.mkdir(exist_ok=True)
    nbformat.write(release.release_notebook(solution), notebooks / FIXTURE.name)
    return notebooks


def _kernels() -> tuple[dict, dict]:
    """The names of a kernel where exercise 0.1 is right, and of one where it is wrong."""
    right, wrong = {}, {}
    exec("def add(a, b):\n    return a + b", right)
    exec("def add(a, b):\n    return a - b", wrong)
    return right, wrong


def test_check_in_a_notebook_runs_one_exercise_s_checks_on_the_live_names(tmp_path, capsys, monkeypatch):
    solution = nbformat.read(FIXTURE, as_version=4)
    notebooks = _released(solution, tmp_path)
    right, wrong = _kernels()
    stub = {}
    exec(release.stub_source(solution.cells[1].source, "0.1"), stub)

    assert check.check("0.1", right, notebooks) is None  # nothing for a notebook to show as Out[...]
    assert capsys.readouterr().out == "✓ 0.1\n"
    check.check("0.1", wrong, notebooks)
    assert capsys.readouterr().out == (
        "✗ 0.1  Fixture practical\n    output differs from the reference: stdout, line 1: -1 where 5 was "
        "expected (must match exactly)\n    expected (reference): 5\n    got (your output):    -1\n")
    check.check("0.1", stub, notebooks)
    assert capsys.readouterr().out == "✗ 0.1  not done yet\n"
    with pytest.raises(KitError, match="Exercise 0.9 is not in 00_fixture.ipynb, whose exercises are 0.1"):
        check.check("0.9", right, notebooks)
    with pytest.raises(KitError, match=r"No released notebook has exercise 'x'.*notebook's number \(00\)"):
        check.check("x", right, notebooks)
    with pytest.raises(KitError, match="as a string"):
        check.check(0.1, right, notebooks)
    with pytest.raises(KitError, match=r"Exercise 0.1 \(in 00_fixture.ipynb\) defines add, which is not "
                       r"defined in this kernel yet\. In 00_fixture.ipynb: run its cells from the top down .*"
                       r"restarted kernel.* In another notebook: run check\("):
        check.check("0.1", {}, notebooks)  # another notebook's kernel, or a restarted one: unknown
    monkeypatch.setenv(LAB_SESSION_ENV, str(tmp_path / "work" / "00_fixture (1).ipynb"))
    with pytest.raises(KitError, match=r"yet\. In this notebook: run its cells from the top down") as said:
        check.check("0.1", {}, notebooks)  # the lab's kernel of a copy of 00: a restarted one
    assert "another notebook" not in str(said.value)
    monkeypatch.setenv(LAB_SESSION_ENV, str(tmp_path / "work" / "mine.ipynb"))
    with pytest.raises(KitError, match=r"yet\. In 00_fixture.ipynb: run .* In another notebook: run check"):
        check.check("0.1", {}, notebooks)  # the student's own notebook: not a copy of a release
    with pytest.raises(KitError, match=r'check needs the exercise to check, as a string: check\("1.2"\)'):
        check.check()


def test_a_check_missing_a_name_from_the_cells_above_says_to_run_them(tmp_path, capsys):
    solution = nbformat.read(FIXTURE, as_version=4)
    solution.cells[2].source = "# NBVAL_CHECK_OUTPUT\nprint(add(two, 3))"  # `two` set by a cell above
    notebooks = _released(solution, tmp_path)
    right, _ = _kernels()
    check.check("0.1", right, notebooks)
    assert ("NameError: name 'two' is not defined (run the notebook's cells above first: a restarted "
            "kernel has forgotten them)") in capsys.readouterr().out


def test_check_in_a_notebook_compares_a_last_line_s_value_as_grading_does(tmp_path, capsys):
    """A check cell whose last line is an expression shows its value (text/plain): the live
    check compares it, as grading does, and does not pass a wrong value for printing nothing."""
    solution = nbformat.read(FIXTURE, as_version=4)
    check_cell = solution.cells[2]
    check_cell.source = "# NBVAL_CHECK_OUTPUT\nadd(2, 3)"
    check_cell.outputs = [nbformat.v4.new_output("execute_result", {"text/plain": "5"}, execution_count=1)]
    notebooks = _released(solution, tmp_path)
    right, wrong = _kernels()
    assert check.check_exercise("0.1", right, notebooks).passed
    assert not check.check_exercise("0.1", wrong, notebooks).passed
    check.check("0.1", wrong, notebooks)
    said = capsys.readouterr().out
    assert "output differs from the reference: text/plain, line 1: -1 where 5 was expected" in said
    check_cell.source, check_cell.outputs = "# NBVAL_CHECK_OUTPUT\nadd(2, 3);", []  # ";" shows nothing
    _released(solution, tmp_path)
    assert check.check_exercise("0.1", right, notebooks).passed


def test_a_stopped_check_shows_what_was_decided_and_exits_with_the_stop_s_status(tmp_path, monkeypatch,
                                                                                  capsys):
    """How ``kit check`` words a stop; the stop itself is tested with real signals below."""
    work = tmp_path / "work"
    workspace.seed(work)
    monkeypatch.setenv("KIT_WORK_DIR", str(work))
    done = [Verdict("1.1", Status.PASSED), Verdict("1.2", Status.NOT_DONE)]
    for signal_status, word in ((130, "interrupted"), (143, "terminated")):
        def stopped(*args, status=signal_status, **kwargs):
            raise check.CheckInterrupted(status, done)

        monkeypatch.setattr(check, "check_notebook", stopped)
        assert main(["check", "01", "03"]) == signal_status
        said = capsys.readouterr()
        assert said.err.endswith(f"kit: {word}\n") and "Traceback" not in said.err
        assert "  ✓ 1.1\n  ✗ 1.2  not done yet\n" in said.out
        row = _row(said.out, "01_naive_bayes.ipynb")
        assert row[:8] == ["01_naive_bayes.ipynb", "3", "1", "1", "0", "0", "1", "1/3"], row
        assert " ".join(row[9:]) == "this run, stopped before the end"
        assert "03_significance" not in said.out, "the check stopped before it"


#: Seconds the exercise of the copy that ``kit check`` is stopped in would take.
SLOW_CELL_SECONDS = 300
#: Seconds a stopped ``kit check`` may take to end: far below SLOW_CELL_SECONDS, generous for
#: a loaded machine (it takes a second or two).
STOP_SECONDS = 60
#: Seconds the kernel may take to start and reach the slow cell on a loaded machine.
START_SECONDS = 300
#: Marks every process of the ``kit check`` under test, through the environment they inherit.
MARK = "KIT_TEST_STOPPED_CHECK"


@pytest.fixture
def slow_kit(tmp_path) -> dict:
    """A real kit, rooted in a folder whose only release is the fixture notebook, and a
    student copy of it whose exercise 0.1 is right and whose 0.2 waits SLOW_CELL_SECONDS in
    two loky workers: what ``python -m helpers.cli check 00`` there runs and the
    environment it runs in."""
    root = tmp_path / "kit"
    shutil.copytree(REPO_ROOT / "helpers", root / "helpers", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(config.SANITIZE_FILE, root / config.SANITIZE_FILE.name)
    solution = nbformat.read(FIXTURE, as_version=4)
    (root / "notebooks").mkdir()
    nbformat.write(release.release_notebook(solution), root / "notebooks" / FIXTURE.name)
    work = tmp_path / "work"
    work.mkdir()
    workspace.blank_copy(root / "notebooks" / FIXTURE.name, work / FIXTURE.name)
    mine = nbformat.read(work / FIXTURE.name, as_version=4)
    answers = {"0.1": solution.cells[1].source,
               "0.2": "from joblib import Parallel, delayed\nimport time\n\n\ndef mean(values):\n"
                      "    return sum(values) / len(values)\n\n\n"
                      f"Parallel(n_jobs=2)(delayed(time.sleep)({SLOW_CELL_SECONDS}) for _ in range(2))"}
    for cell in mine.cells:
        cell.source = answers.get(exercise_id(cell), cell.source)
    nbformat.write(mine, work / FIXTURE.name)
    (tmp_path / "tmp").mkdir()
    env = {**os.environ, "PYTHONPATH": str(root), "KIT_WORK_DIR": str(work), "TMPDIR": str(tmp_path / "tmp"),
           "KIT_DATA_DIR": str(tmp_path / "data"), "PYTHONHASHSEED": "0", MARK: str(tmp_path)}
    return {"root": root, "env": env, "tmp": tmp_path / "tmp"}


def _wait_for_workers(kit: subprocess.Popen) -> list[psutil.Process]:
    """The processes under ``kit`` once the slow cell's two loky workers run."""
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline and kit.poll() is None:
        tree = psutil.Process(kit.pid).children(recursive=True)
        workers = [p for p in tree if "LokyProcess" in " ".join(_cmdline(p))]
        if len(workers) >= 2:
            return tree
        time.sleep(0.5)
    out, err = kit.communicate(timeout=STOP_SECONDS) if kit.poll() is not None else ("", "")
    raise AssertionError(f"the slow cell's workers never started:\n{out}\n{err}")


def _cmdline(process: psutil.Process) -> list[str]:
    try:
        return process.cmdline()
    except psutil.Error:
        return []


@pytest.mark.kernel
@pytest.mark.slow
@pytest.mark.parametrize(("stop", "status", "word"), [(signal.SIGINT, 130, "interrupted"),
                                                       (signal.SIGTERM, 143, "terminated")])
def test_a_real_stop_ends_kit_check_at_once_with_the_partial_table_and_nothing_left(slow_kit, stop, status,
                                                                                   word):
    """Ctrl-C as a terminal sends it (SIGINT to the whole foreground process group), and
    SIGTERM, end a real ``kit check`` in a real kernel within seconds: the status, the
    exercises decided before the stop, and no process or temporary folder left behind."""
    env = slow_kit["env"]
    # as from a terminal, even when pytest itself was started in the background, where the
    # shell leaves SIGINT ignored for everything it starts (Python then never sees a Ctrl-C):
    # a signal this process catches is back to its default in the program it starts
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        kit = subprocess.Popen([sys.executable, "-m", "helpers.cli", "check", "00"], cwd=slow_kit["root"],
                               env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               start_new_session=True)
    finally:
        signal.signal(signal.SIGINT, before)
    try:
        running = _wait_for_workers(kit)
        signalled = time.monotonic()
        os.killpg(kit.pid, stop)
        out, err = kit.communicate(timeout=STOP_SECONDS + SLOW_CELL_SECONDS)
        took = time.monotonic() - signalled
        assert kit.returncode == status, f"status {kit.returncode} after {took:.0f} s:\n{out}\n{err}"
        assert took < STOP_SECONDS, f"kit check took {took:.0f} s to stop"
        assert err.endswith(f"kit: {word}\n") and "Traceback" not in err, err
        assert "00_fixture.ipynb: stopped; the exercises decided before the stop (1):\n  ✓ 0.1\n" in out, out
        row = _row(out, FIXTURE.name)
        assert row[:8] == [FIXTURE.name, "2", "1", "0", "0", "0", "1", "1/2"], out
        time.sleep(1)  # a process killed a moment ago may take that long to be gone
        left = [p for p in running if _alive(p)] + marked_processes(MARK, env[MARK])
        assert not left, f"left running: {[' '.join(_cmdline(p)) for p in left]}"
        assert sorted(path.name for path in slow_kit["tmp"].iterdir()) == []
    finally:
        running_kit = [] if kit.poll() is not None else [psutil.Process(kit.pid)]
        for process in [*marked_processes(MARK, env[MARK]), *running_kit]:
            with contextlib.suppress(psutil.Error):
                process.kill()
        kit.communicate()


@pytest.mark.slow
def test_a_run_out_of_time_is_stopped_whole_even_what_runs_in_a_session_of_its_own(tmp_path, monkeypatch):
    """As a kernel does (jupyter_client starts it in a session of its own), with its workers."""
    monkeypatch.setenv(MARK, str(tmp_path))
    code = ("import subprocess, sys, time\n"
            f"subprocess.Popen([sys.executable, '-c', 'import time; time.sleep({SLOW_CELL_SECONDS})'], "
            "start_new_session=True)\n"
            f"time.sleep({SLOW_CELL_SECONDS})")
    started = time.monotonic()
    try:
        assert nbval_run._ran_within([sys.executable, "-c", code], tmp_path, 5, 0, "") is False
        assert time.monotonic() - started < STOP_SECONDS
        assert marked_processes(MARK, str(tmp_path)) == []
    finally:
        for process in marked_processes(MARK, str(tmp_path)):
            with contextlib.suppress(psutil.Error):
                process.kill()


def _alive(process: psutil.Process) -> bool:
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def _row(out: str, notebook: str) -> list[str]:
    """The words of ``notebook``'s line in the progress table that ``out`` prints."""
    lines = [line.split() for line in out.splitlines() if line.startswith(notebook + " ")]
    assert lines, f"no line for {notebook} in the table:\n{out}"
    return lines[-1]


def test_kit_check_names_what_it_was_given_and_what_it_could_have_been(tmp_path, monkeypatch, capsys):
    work = tmp_path / "work"
    workspace.seed(work)
    monkeypatch.setenv("KIT_WORK_DIR", str(work))
    assert main(["check", "1.2"]) == 1
    assert "1.2 is an exercise: `kit check 01` checks its notebook" in capsys.readouterr().err
    for wrong in ("42", "foo"):
        assert main(["check", wrong]) == 1
        said = capsys.readouterr().err
        assert f"No notebook '{wrong}' in your workspace" in said and "its notebooks are 00, 01," in said
    assert main(["check", "00"]) == 0
    assert capsys.readouterr().out == "00_data.ipynb has no exercises to check.\n"


def test_an_edited_release_is_named_not_taken_for_a_newer_one(tmp_path, monkeypatch, capsys):
    notebooks = tmp_path / "notebooks"
    shutil.copytree(config.NOTEBOOKS_DIR, notebooks)
    work = tmp_path / "work"
    workspace.seed(work, notebooks)
    edited = notebooks / "03_significance.ipynb"
    nb = nbformat.read(edited, as_version=4)
    nb.cells[0].source += "\n\nmy notes"  # the student worked in notebooks/ by mistake
    nbformat.write(nb, edited)
    states = workspace.seed(work, notebooks)
    said = states[edited.name]
    assert "was edited since the release" in said and "newer release" not in said
    with pytest.raises(KitError, match=r"03_significance.ipynb was edited since the release .*git checkout"):
        check.released_for(work / edited.name, notebooks)
    assert check.released_for(work / "01_naive_bayes.ipynb", notebooks) == notebooks / "01_naive_bayes.ipynb"


@pytest.mark.kernel
@pytest.mark.slow
def test_kit_check_alone_reuses_the_verdicts_of_an_unchanged_copy(tmp_path, monkeypatch, capsys):
    solution = nbformat.read(FIXTURE, as_version=4)
    notebooks = _released(solution, tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    stub = release.release_notebook(solution)
    nbformat.write(stub, work / FIXTURE.name)
    first = check.check_workspace(config.notebooks_in(work), timeout=120, notebooks=notebooks, say=print)
    capsys.readouterr()

    def no_run(*args, **kwargs):
        raise AssertionError("an unchanged copy was run again")

    monkeypatch.setattr(check, "check_notebook", no_run)
    again = check.check_workspace(config.notebooks_in(work), timeout=120, notebooks=notebooks, say=print)
    assert [v.status for v in again[FIXTURE.name]] == [v.status for v in first[FIXTURE.name]]
    assert "(unchanged since its last check)" in capsys.readouterr().out
    stub.cells[1].source = "def add(a, b):\n    return a + b"  # the student works on: run again
    nbformat.write(stub, work / FIXTURE.name)
    with pytest.raises(AssertionError, match="run again"):
        check.check_workspace(config.notebooks_in(work), timeout=120, notebooks=notebooks)
    copy, reference = work / FIXTURE.name, notebooks / FIXTURE.name
    key = check.check_key(copy, reference, 120)
    assert check.check_key(copy, reference, 60) != key  # another timeout
    monkeypatch.setenv("KIT_PROFILE", "full" if check.settings.profile() != "full" else "quick")
    assert check.check_key(copy, reference, 120) != key  # another profile
    timed_out = Verdict("0.1", Status.FAILED, "Timeout of 120 seconds exceeded", stopped=True)
    check.remember(copy, key, [timed_out])
    assert check.remembered(copy, key) is None  # a run that stopped is not kept
    raised = [Verdict("0.1", Status.FAILED, "TimeoutError: my own", position=0)]  # the student's error
    check.remember(copy, key, raised)
    assert [v.reason for v in check.remembered(copy, key)] == ["TimeoutError: my own"]
    (work / check.CHECKED_FILE).write_text('{"00_fixture.ipynb": ["garbled"]}')
    assert check.remembered(copy, key) is None


def _seeded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A workspace seeded from the release, the one ``kit check`` looks at."""
    work = tmp_path / "work"
    workspace.seed(work)
    monkeypatch.setenv("KIT_WORK_DIR", str(work))
    return work


def _answer(copy: Path, question: str, text: str) -> None:
    """Write ``text`` in place of the placeholder of ``copy``'s answer cell ``question``."""
    nb = nbformat.read(copy, as_version=4)
    for cell in nb.cells:
        if cell.get("metadata", {}).get("kit", {}).get("answer") == question:
            cell.source = cell.source.replace(release.ANSWER_PLACEHOLDER, text)
    nbformat.write(nb, copy)


def _never_run(*args, **kwargs):
    raise AssertionError("a notebook ran")


def _all_pass_in(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Make every check pass at once; the names of the notebooks checked go in the list returned."""
    ran = []

    def all_pass(copy, reference, timeout=None, progress=False):
        ran.append(copy.name)
        return [Verdict(ex.id, Status.PASSED) for ex in exercises(nbformat.read(reference, as_version=4))]

    monkeypatch.setattr(check, "check_notebook", all_pass)
    return ran


def test_kit_check_run_runs_each_copy_changed_since_its_check(tmp_path, monkeypatch, capsys):
    work = _seeded(tmp_path, monkeypatch)
    monkeypatch.setenv("KIT_DATA_DIR", str(tmp_path / "data"))  # no model to train, no archive to hash
    ran = _all_pass_in(monkeypatch)
    assert main(["check", "--run"]) == 0
    with_exercises = [path.name for path in config.notebooks_in(work)
                      if exercises(nbformat.read(path, as_version=4))]
    assert with_exercises and ran == with_exercises, "every notebook with exercises"
    ran.clear()
    _answer(work / "03_significance.ipynb", "3.a", "Two-sided.")
    assert main(["check", "--run"]) == 0 and ran == ["03_significance.ipynb"]
    out = capsys.readouterr().out
    assert "01_naive_bayes.ipynb: 3/3 exercises pass the visible checks (grading also runs hidden ones) " \
           "(unchanged since its last check)" in out
    assert " ".join(_row(out, "01_naive_bayes.ipynb")[9:]) == "saved, unchanged: not run again"
    assert " ".join(_row(out, "03_significance.ipynb")[9:]) == "this run"


def test_kit_check_alone_shows_the_saved_verdicts_and_what_changed_and_runs_nothing(tmp_path, monkeypatch,
                                                                                   capsys):
    from helpers.course.student import progress

    work = _seeded(tmp_path, monkeypatch)
    monkeypatch.setattr(nbval_run, "_ran_within", _never_run)
    copy = work / "01_naive_bayes.ipynb"
    _answer(copy, "1.a", "Because the prior is even.")
    saved = [Verdict("1.1", Status.PASSED), Verdict("1.2", Status.FAILED, "ValueError: no"),
             Verdict("1.3", Status.NOT_DONE)]
    check.remember(copy, "a key", saved, progress.fingerprint(copy, config.NOTEBOOKS_DIR / copy.name))

    assert main(["check"]) == 0, "the table is information: nothing ran, nothing failed"
    out = capsys.readouterr().out
    row = _row(out, copy.name)
    assert row[:9] == [copy.name, "3", "1", "1", "0", "1", "0", "1/3", "1/4"], row
    assert row[9] == "saved" and " ".join(row[12:]) == "nothing changed since", row
    never = _row(out, "03_significance.ipynb")
    assert never[1:] == ["2", "-", "-", "-", "-", "2", "0/2", "0/4", "none", "yet"], never
    assert "00_data.ipynb" not in out, "a notebook with neither exercises nor questions has no line"
    assert "  01_naive_bayes.ipynb: 1.b (2), 1.c (3), 1.d (3)\n" in out, "the questions left, with points"
    assert "Nothing ran" in out

    _answer(copy, "1.b", "Smoothing.")  # the student works on: the saved verdicts stay, said to be older
    check.remember(work / "03_significance.ipynb", "a key", [Verdict("3.1", Status.PASSED)])  # an older kit's
    main(["check"])
    out = capsys.readouterr().out
    row = _row(out, copy.name)
    assert row[8] == "2/4" and " ".join(row[12:]) == "changed since: your copy", row
    assert " ".join(_row(out, "03_significance.ipynb")[9:]) == progress.OLDER


def test_kit_check_alone_imports_nothing_heavy_and_answers_at_once(tmp_path, monkeypatch):
    """`kit check` alone reads JSON: nbformat (its schema validator takes a second or more to
    import), pandas and the kernel machinery stay out, and it answers well within 2 s."""
    work = _seeded(tmp_path, monkeypatch)
    code = ("import sys, time; start = time.perf_counter(); from helpers.cli import main; main(['check']); "
            "print(round(time.perf_counter() - start, 2), *sorted(m for m in ('nbformat', 'pandas', 'numpy', "
            "'jupyter_client', 'helpers.course.engine.verdict') if m in sys.modules))")
    shown = subprocess.run([sys.executable, "-c", code], env={**os.environ, "KIT_WORK_DIR": str(work)},
                           capture_output=True, text=True, check=True).stdout.splitlines()[-1].split()
    assert shown[1:] == [], f"kit check alone imported {shown[1:]}"
    assert float(shown[0]) < 10, f"kit check alone took {shown[0]} s"  # 0.1 s idle; bounds a hang only


def test_kit_check_takes_several_notebooks_by_number_name_or_path_and_refuses_the_release(
        tmp_path, monkeypatch, capsys):
    work = _seeded(tmp_path, monkeypatch)
    nb01 = work / "01_naive_bayes.ipynb"
    for which in ("01", "1", "01_naive_bayes", "01_naive_bayes.ipynb", str(nb01)):
        assert check.working_copy(which, work) == nb01, which
    monkeypatch.chdir(REPO_ROOT)
    assert main(["check", "notebooks/01_naive_bayes.ipynb"]) == 1
    said = capsys.readouterr().err
    assert "notebooks/01_naive_bayes.ipynb is the blank release" in said and "`kit check 01`" in said

    ran = _all_pass_in(monkeypatch)
    monkeypatch.chdir(tmp_path)
    assert main(["check", "03_significance", "work/01_naive_bayes.ipynb", "3"]) == 0
    out = capsys.readouterr().out
    assert ran == ["03_significance.ipynb", "01_naive_bayes.ipynb"], "each named once, in order"
    assert "03_significance.ipynb: 2/2 exercises pass" in out and "  ✓ 3.2\n" in out and "  ✓ 1.3\n" in out
    assert _row(out, "01_naive_bayes.ipynb")[1:9] == ["3", "3", "0", "0", "0", "0", "3/3", "0/4"]
    assert _row(out, "03_significance.ipynb")[7] == "2/2"
    main(["check"])  # both checks were saved
    out = capsys.readouterr().out
    assert _row(out, "01_naive_bayes.ipynb")[2] == "3" and _row(out, "03_significance.ipynb")[2] == "2"


class _Terminal(io.StringIO):
    """Standard input as a terminal where the student types ``getvalue()``."""

    def isatty(self) -> bool:
        return True


def test_a_check_that_would_train_the_doc2vec_model_says_so_and_how_long_and_asks(tmp_path, monkeypatch,
                                                                                  capsys):
    _seeded(tmp_path, monkeypatch)
    ran = _all_pass_in(monkeypatch)
    monkeypatch.setattr(check, "doc2vec_untrained", lambda: True)
    monkeypatch.setattr(sys, "stdin", _Terminal("n\n"))
    assert main(["check", "04"]) == 1
    said = capsys.readouterr()
    assert ran == [], "the student said no"
    assert "Checking 04_doc2vec.ipynb trains the kit's Doc2Vec model first" in said.out
    assert "about 6 minutes on one core (360 s measured, docs/benchmarks.md)" in said.out
    assert "Go on? [y/N] 04_doc2vec.ipynb: not checked." in said.out
    assert "kit: Not checked: 04_doc2vec.ipynb." in said.err

    monkeypatch.setattr(sys, "stdin", _Terminal("y\n"))
    assert main(["check", "04", "01"]) == 0 and ran == ["04_doc2vec.ipynb", "01_naive_bayes.ipynb"]
    assert capsys.readouterr().out.count("trains the kit's Doc2Vec model") == 1, "01 trains no model"
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))  # no terminal: said, and on it goes
    assert main(["check", "04"]) == 0
    assert "No terminal to answer on: going on" in capsys.readouterr().out
    monkeypatch.setattr(check, "doc2vec_untrained", lambda: False)
    main(["check", "04"])
    assert "Doc2Vec" not in capsys.readouterr().out

    measured = " ".join((REPO_ROOT / "docs" / "benchmarks.md").read_text(encoding="utf-8").split())
    assert f"alone, the kit's model takes about {check.DOC2VEC_TRAINING_SECONDS} s" in measured


def test_a_check_looks_for_the_doc2vec_model_where_its_kernel_caches_it(tmp_path, monkeypatch):
    from helpers import embeddings, fetch

    monkeypatch.setenv("KIT_DATA_DIR", str(tmp_path / "data"))
    assert check.doc2vec_untrained() is False, "no data: the check itself says what is missing"
    monkeypatch.setattr(fetch, "stamp", lambda name: f"the archive of {name}")
    model = embeddings.config_for("quick")
    # a kernel of `kit check` hashes as the reference (PYTHONHASHSEED=0), whatever `kit` itself does
    assert embeddings.model_path(model, hashed_as_reference=embeddings.reference_hashing()) == \
        embeddings.model_path(model)
    assert embeddings.model_path(model, hashed_as_reference=True) != \
        embeddings.model_path(model, hashed_as_reference=False)
    assert check.doc2vec_untrained() is True
    for profile in ("quick", settings.profile()):
        trained = embeddings.model_path(embeddings.config_for(profile), hashed_as_reference=True)
        trained.parent.mkdir(parents=True, exist_ok=True)
        trained.write_bytes(b"a model")
    assert check.doc2vec_untrained() is False


def test_second_and_renamed_copies_are_found_and_the_newest_is_checked(tmp_path, monkeypatch):
    """What the Binder download/upload routine and a rename make: `00_fixture (1).ipynb`
    beside the original, or the work under another name; `kit work` puts no blank copy
    beside renamed work."""
    solution = nbformat.read(FIXTURE, as_version=4)
    notebooks, work = tmp_path / "notebooks", tmp_path / "work"
    notebooks.mkdir()
    work.mkdir()
    nbformat.write(release.release_notebook(solution), notebooks / FIXTURE.name)
    monkeypatch.setattr(config, "NOTEBOOKS_DIR", notebooks)
    original, second = work / FIXTURE.name, work / "00_fixture (1).ipynb"
    nbformat.write(release.release_notebook(solution), original)
    nbformat.write(solution, second)
    os.utime(original, (time.time() - 60, time.time() - 60))
    assert check.working_copy("00", work) == second == check.working_copy("00_fixture", work)
    assert check.working_copy("00_fixture.ipynb", work) == original  # a file named is that file
    assert check.released_for(second) == notebooks / FIXTURE.name
    assert check.copies_note(second, work) == (
        "checking 00_fixture (1).ipynb as your copy of 00_fixture.ipynb; work/ also holds "
        "00_fixture.ipynb: hand in the one your course asks for, under the released name")
    assert "work/ also holds 00_fixture (1).ipynb" in check.copies_note(original, work)
    # kit check alone: the table's line is the newest copy's, and a line says which copy it shows
    [line] = progress.workspace_progress(work, notebooks)
    assert line.notebook == second.name
    assert progress.copies_lines(progress.workspace_copies(work, notebooks)) == [
        "  00_fixture.ipynb: the table shows 00_fixture (1).ipynb, the newest copy (also in work/: "
        "00_fixture.ipynb)"]

    renamed = work / "my practical.ipynb"
    original.unlink()
    second.rename(renamed)
    assert check.working_copy("00", work) == renamed
    assert check.released_for(renamed) == notebooks / FIXTURE.name  # by the exercise cells it holds
    assert workspace.seed(work, notebooks) == {FIXTURE.name: "yours, as my practical.ipynb"}
    assert [line.notebook for line in progress.workspace_progress(work, notebooks)] == [renamed.name]
    assert not original.exists()
    (work / "notes.ipynb").write_text(nbformat.writes(nbformat.v4.new_notebook()))
    with pytest.raises(KitError, match="holds none of their exercise cells"):
        check.released_for(work / "notes.ipynb")


def test_the_check_key_reads_each_data_set_s_stamp_and_scans_no_file(tmp_path, monkeypatch):
    """kit check reuses saved verdicts at once: its key reads the fetch stamps, it does not
    re-verify 100,000 extracted files (a run's `require` checks what it reads)."""
    from helpers import fetch

    copy, reference = tmp_path / "copy.ipynb", tmp_path / "reference.ipynb"
    copy.write_text("{}")
    reference.write_text("{}")
    monkeypatch.setenv("KIT_DATA_DIR", str(tmp_path / "data"))

    def no_scan(*args, **kwargs):
        raise AssertionError("the key scanned a data set's files")

    monkeypatch.setattr(fetch, "is_verified", no_scan)
    monkeypatch.setattr(fetch, "changed_files", no_scan)
    unfetched = check.check_key(copy, reference, 60)
    stamp = tmp_path / "data" / fetch.DATASETS["imdb"].folder / fetch.STAMP
    stamp.parent.mkdir(parents=True)
    stamp.write_text("a" * 64 + "\n")
    fetched = check.check_key(copy, reference, 60)
    assert fetched != unfetched
    stamp.write_text("b" * 64 + "\n")  # fetched again, from another archive
    assert check.check_key(copy, reference, 60) not in (fetched, unfetched)
