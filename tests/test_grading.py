"""`kit grade` on a class with correct, stub, corrupt, endless-loop and other submissions."""

from __future__ import annotations

import json
import os
import shutil
import socket
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import grading_harness
import nbformat
import pandas as pd
import psutil
import pytest

from helpers import settings
from helpers.cli import main
from helpers.course.classroom import classgrade, gradebook, layout, summaries
from helpers.course.classroom.record import Record
from helpers.course.engine import bubblewrap, grading, nbval_run, sandbox
from helpers.course.engine.limits import Job
from helpers.course.engine.verdict import DIFFERS, HIDDEN_CODE, Ending, Problem, Status
from helpers.course.notebook import cells, merge, release
from helpers.errors import KitError

FIXTURES = Path(__file__).parent / "fixtures" / "solutions"
NAME = "00_fixture.ipynb"
# A cell may run this long: the endless loop costs that much, and the fixture's other cells
# (each well under a second) keep their verdicts on a machine many times slower than usual.
LOOP_SECONDS = 30


def _write(folder: Path, nb: nbformat.NotebookNode) -> None:
    folder.mkdir(parents=True)
    nbformat.write(nb, folder / NAME)


REPO = settings.REPO_ROOT
#: A command line no other process has: the lingering process the "lingerer" starts.
LINGER = "import time; time.sleep(4242.4242)"
#: Folders beside the repository the prober looks for, at most.
MAX_PROBED = 50
CANARY = "system,fold,correct\nnb,0,True\n"


def _beside_the_repository() -> list[str]:
    """What lies beside the repository on this machine (other clones, ``../shared``, and for a
    clone under /tmp everything else there): none of it may exist for student code. Left out:
    what the sandbox shows on purpose (Python, the folders it imports from, the kit's code)
    and the job's own folder, which is beside a clone under /tmp inside the sandbox."""
    shown = bubblewrap._shown()
    return [str(path) for path in sorted(REPO.parent.iterdir())[:MAX_PROBED]
            if path.name != REPO.name and path != bubblewrap.JOB_DIR
            and not any(path == s or path in s.parents for s in shown)]


def _attack(target: str, text: str) -> str:
    return (f"try:\n    open({target}, 'a').write({text!r})\nexcept OSError as err:\n"
            f"    print(type(err).__name__)\n")


#: Writes a report in which every cell passed into every file any process has open (the
#: report's pipe among them, were it reachable), then answers 0.1 wrongly.
FORGER = """import os
fake = b'<testsuites><testsuite>' + b''.join(b'<testcase name="Cell %d"/>' % n for n in range(9)) \\
    + b'</testsuite></testsuites>'
for pid in filter(str.isdigit, os.listdir('/proc')):
    try:
        fds = os.listdir(f'/proc/{pid}/fd')
    except OSError:
        continue
    for fd in fds:
        try:
            with open(f'/proc/{pid}/fd/{fd}', 'wb') as out:
                out.write(fake)
        except OSError:
            pass
def add(a, b):
    return a - b
"""
#: Copies the code that calls it (its callers' frames, every cell linecache holds) and
#: raises the copy in the next exercise, where the student's feedback would show it.
FRAMEWALKER = """import inspect, linecache
SEEN, CACHED = [], []
def add(a, b):
    frame = inspect.currentframe().f_back
    while frame is not None:
        SEEN.append(''.join(linecache.getlines(frame.f_code.co_filename)) + repr(frame.f_locals))
        frame = frame.f_back
    CACHED.extend(''.join(entry[2]) for entry in list(linecache.cache.values()) if len(entry) > 2)
    return a + b
"""
#: The issue's finalizer: an object left behind by the exercise reads every frame on the stack
#: whenever it is collected (in K22's kernel, the guard's own frames and key) and keeps them.
FINALIZER = """import sys
SEEN = []
class Spy:
    def __del__(self):
        frame = sys._getframe(1)
        while frame is not None:
            SEEN.append(repr(frame.f_locals)[:2000] + repr(getattr(frame.f_code, 'co_consts', ())))
            frame = frame.f_back
def add(a, b):
    Spy()
    return a + b
"""
#: print replaced by a callable object (not a function) that shows the visible check's answer.
PRINTER = """import builtins, sys
class Forge:
    def __call__(self, *args, **kwargs):
        sys.stdout.write('5\\n' if args and args[0] == 'FORGED' else ' '.join(map(str, args)) + '\\n')
builtins.print = Forge()
def add(a, b):
    return 'FORGED'
"""
#: An added cell dressed as a hidden check (markers and metadata): it is the student's code,
#: run in the kernel like any cell of theirs, never in the grader.
DRESSED = ("# NBVAL_CHECK_OUTPUT\n### BEGIN HIDDEN CHECKS\n# Intent: mine\nOFFSET = 0\n"
           "### END HIDDEN CHECKS")


#: Tries what bubblewrap alone would not stop: a socket of the host (where an instructor's
#: session bus or docker.sock would be), the solutions, the grading process's memory.
PROBER = """import glob, os, socket
reached = []
try:
    socket.socket(socket.AF_UNIX).connect({socket!r})
    reached.append('a host socket')
except OSError:
    pass
if glob.glob({solutions!r} + '/*'):
    reached.append('the solutions')
if [path for path in {beside!r} if os.path.lexists(path)]:
    reached.append('folders beside the repository (other clones)')
try:
    open(f'/proc/{{os.getppid()}}/mem', 'rb').close()
    reached.append('the memory of the grading process')
except OSError:
    pass
assert not reached, 'reached ' + ', '.join(reached)
def add(a, b):
    return a + b
"""
LIMITS = sandbox.Limits(disk_mb=64, memory_mb=1200)
#: Four children that each hold 400 MB of their own: 1600 MB in all, past ``LIMITS``.
HOARDERS = ("import os, time\nfor _ in range(4):\n    if os.fork() == 0:\n        try:\n"
            "            held = b'x' * (400 * 2**20)\n            time.sleep(60)\n        finally:\n"
            "            os._exit(0)\nfor _ in range(4):\n    os.wait()\n")
SOLUTIONS: dict[Path, Path] = {}  # the fixture's solutions folder, by its submissions folder
SOLVED_ADD = "def add(a, b):\n    return a + b\n"


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> tuple[Path, pd.DataFrame]:
    data = tmp_path_factory.mktemp("data")  # the shared caches a student may try to flip
    (data / "results").mkdir()
    (data / "results" / "canary.csv").write_text(CANARY)
    # a socket of the host, where the sandbox hides them (an instructor's session bus lives there)
    host_socket = Path("/run") / f"kit-test-{os.getpid()}.sock"
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(host_socket))
    host_socket.chmod(0o777)  # anyone may connect: only hiding it keeps the sandbox out
    listener.listen()
    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("KIT_DATA_DIR", str(data))
            yield _grade_class(tmp_path_factory, data, host_socket)
    finally:
        listener.close()
        host_socket.unlink(missing_ok=True)


def _grade_class(tmp_path_factory, data: Path, host_socket: Path) -> tuple[Path, pd.DataFrame]:
    subs = tmp_path_factory.mktemp("submissions")
    solution = nbformat.read(FIXTURES / NAME, as_version=4)
    solution.cells[5].metadata["kit"]["tolerance"] = 3  # mean([1, 2, 3, 6]) prints 3.0
    solutions = tmp_path_factory.mktemp("solutions")
    nbformat.write(solution, solutions / NAME)
    stub = release.release_notebook(solution)

    _write(subs / "correct", solution)
    _write(subs / "stub", stub)
    (subs / "corrupt").mkdir()
    (subs / "corrupt" / NAME).write_text("{this is not json")

    loop = nbformat.from_dict(stub)
    loop.cells[1].source = "def add(a, b):\n    while True:\n        pass"
    loop.cells[3].source = solution.cells[4].source
    _write(subs / "loop", loop)

    killer = nbformat.from_dict(stub)
    killer.cells[1].source = "import os\nos._exit(1)"
    _write(subs / "killer", killer)

    deaf = nbformat.from_dict(stub)  # a loop that ignores the interrupt: nbval stops the kernel
    deaf.cells[1].source = ("import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\n"
                           "while True:\n    pass")
    _write(subs / "deaf", deaf)

    stopper = nbformat.from_dict(stub)  # 0.1 passes, then 0.2 takes the job past its memory
    stopper.cells[1].source = SOLVED_ADD
    stopper.cells[3].source = HOARDERS + solution.cells[4].source
    _write(subs / "stopper", stopper)

    cheater = nbformat.from_dict(stub)  # edits a check cell and its output, not the exercise
    cheater.cells[2].source = "# NBVAL_CHECK_OUTPUT\nprint(5)"
    _write(subs / "cheater", cheater)

    helper = nbformat.from_dict(stub)  # adds a cell of its own, used by the exercise
    helper.cells.insert(1, nbformat.v4.new_code_cell("def plus(a, b):\n    return a + b"))
    helper.cells[2].source = "def add(a, b):\n    return plus(a, b)"
    helper.cells[4].source = solution.cells[4].source
    _write(subs / "helper", helper)

    wrong = nbformat.from_dict(stub)  # a wrong answer: its check prints another number
    wrong.cells[1].source = "def add(a, b):\n    return a - b"
    wrong.cells[3].source = solution.cells[4].source
    _write(subs / "wrong", wrong)

    for student, shift in (("near", 0.2), ("far", 0.4)):  # within the tolerance, and past it
        moved = nbformat.from_dict(stub)
        moved.cells[1].source = solution.cells[1].source
        moved.cells[3].source = f"def mean(values):\n    return sum(values) / len(values) + {shift}"
        _write(subs / student, moved)

    hardcoded = nbformat.from_dict(stub)  # right on the visible check only: the hidden one catches it
    hardcoded.cells[1].source = "def add(a, b):\n    return 5"
    hardcoded.cells[3].source = solution.cells[4].source
    _write(subs / "hardcoded", hardcoded)

    kitcopy = nbformat.from_dict(stub)  # the "reference implementation" of 0.1 instead of its own code
    kitcopy.cells[1].source = "import operator\n\n\ndef add(a, b):\n    return operator.add(a, b)"
    kitcopy.cells[3].source = "def mean(values):\n    return 3.0"  # the checked answer, typed in
    _write(subs / "kitcopy", kitcopy)

    # the hostile class's attacks from inside the kernel (issue K22): a library's comparison
    # patched, and the kit's own implementation reached by computed names
    patcher = nbformat.from_dict(stub)
    patcher.cells[1].source = "import numpy as np\nnp.allclose = lambda *a, **k: True\n" + SOLVED_ADD
    _write(subs / "patcher", patcher)
    walker = nbformat.from_dict(stub)
    walker.cells[1].source = FRAMEWALKER
    walker.cells[3].source = ("def mean(values):\n"
                              "    raise ValueError(' | '.join(SEEN + CACHED).replace(chr(10), ' / '))")
    _write(subs / "framewalker", walker)
    finalizer = nbformat.from_dict(stub)
    finalizer.cells[1].source = FINALIZER
    finalizer.cells[3].source = ("def mean(values):\n    import gc\n    gc.collect()\n"
                                 "    raise ValueError(' | '.join(SEEN).replace(chr(10), ' / '))")
    _write(subs / "finalizer", finalizer)
    printer = nbformat.from_dict(stub)
    printer.cells[1].source = PRINTER
    _write(subs / "printer", printer)
    dressed = nbformat.from_dict(stub)
    dressed_cell = nbformat.v4.new_code_cell(DRESSED, metadata={"kit": {"checks": "0.1"}})
    dressed.cells.insert(1, dressed_cell)
    dressed.cells[2].source = "def add(a, b):\n    return a + b + OFFSET"
    _write(subs / "dressed", dressed)
    importer = nbformat.from_dict(stub)
    importer.cells[1].source = ("import importlib\nop = importlib.import_module('oper' + 'ator')\n"
                                "add = getattr(op, 'a' + 'dd')")
    _write(subs / "importer", importer)

    shadow = nbformat.from_dict(stub)  # an added cell silences print, so no check shows a difference
    shadow.cells.insert(1, nbformat.v4.new_code_cell("def print(*args, **kwargs):\n    pass"))
    _write(subs / "shadow", shadow)

    replayer = nbformat.from_dict(stub)  # an added cell rewrites every later cell to print the reference
    replayer.cells.insert(1, nbformat.v4.new_code_cell(
        "REPLAY = {'print(add(2, 3))': 'print(5)', 'print(add(-1, 1.5))': 'print(0.5)',\n"
        "          'print(mean([1, 2, 3, 6]))': 'print(3.0)'}\n"
        "def replay(lines):\n"
        "    return [REPLAY.get(line.strip(), line) for line in lines]\n"
        "get_ipython().input_transformers_post.append(replay)"))
    _write(subs / "replayer", replayer)

    old = nbformat.from_dict(helper)  # saved before nbformat 4.5: no cell ids
    old.nbformat_minor = 4
    for cell in old.cells:
        del cell["id"]
    (subs / "old").mkdir()
    (subs / "old" / NAME).write_text(json.dumps(old))

    (subs / "absent").mkdir()

    # Attacks: each must fail to reach outside its own run.
    vandal = nbformat.from_dict(stub)
    vandal.cells[1].source = "import os\n" + "".join(_attack(repr(str(target)), "x") for target in (
        subs / "correct" / NAME, REPO / "helpers" / "nbval_hooks.py", data / "results" / "canary.csv",
    )) + _attack("os.path.join(os.environ['KIT_DATA_DIR'], 'results', 'canary.csv')", ",flipped") + \
        f"try:\n    os.remove({str(subs / 'grades.csv')!r})\nexcept OSError:\n    pass\n" + SOLVED_ADD
    _write(subs / "vandal", vandal)
    lingerer = nbformat.from_dict(stub)  # leaves a process behind to rewrite grades.csv later
    lingerer.cells[1].source = (
        f"import subprocess, sys\nsubprocess.Popen([sys.executable, '-c', {LINGER!r}], "
        "start_new_session=True)\n" + SOLVED_ADD)
    _write(subs / "lingerer", lingerer)
    for student, code in (
            ("hog", "import numpy as np\nhog = np.ones(6 * 10**9 // 8)\n" + SOLVED_ADD),
            ("talker", "for _ in range(600_000):\n    print('x' * 200)\n" + SOLVED_ADD),
            ("forker", "import os, time\nfor _ in range(3000):\n    if os.fork() == 0:\n"
                       "        time.sleep(60)\n        os._exit(0)\n" + SOLVED_ADD),
            ("threader", "import threading, time\nthreading.stack_size(2**16)\nfor _ in range(3000):\n"
                         "    threading.Thread(target=time.sleep, args=(60,), daemon=True).start()\n"
                         + SOLVED_ADD),
            ("offline", "import socket\nassert [n for _, n in socket.if_nameindex()] == ['lo'], "
                        "'a network'\n" + SOLVED_ADD),
            ("peeker", "import glob\nassert glob.glob('*.ipynb') + glob.glob('../*.ipynb'), "
                       "'no notebook to read'\n" + SOLVED_ADD),
            ("prober", PROBER.format(socket=str(host_socket), solutions=str(REPO / "solutions"),
                                     beside=_beside_the_repository())),
            ("planter", "open('hypothesis.py', 'w').write('import os; os._exit(2)')\n" + SOLVED_ADD),
            # holds its memory until the cell's time is up: the watch samples it however
            # loaded the machine is (a short sleep let it end first under load)
            ("memfder", "import os\nfds = [os.memfd_create('x') for _ in range(24)]\nfor fd in fds:\n"
                        f"    os.write(fd, bytes(60 * 2**20))\nimport time\ntime.sleep({LOOP_SECONDS})\n"
                        + SOLVED_ADD),
            ("skipper", "# NBVAL_SKIP\n" + SOLVED_ADD),
            ("filler", "with open('/tmp/fill', 'wb') as f:\n    for _ in range(200):\n"
                       "        f.write(bytes(2**20))\n" + SOLVED_ADD),
            ("forger", FORGER)):
        attacker = nbformat.from_dict(stub)
        attacker.cells[1].source = code
        _write(subs / student, attacker)
    raiser = nbformat.from_dict(stub)  # an added cell raises before the exercise that needs it
    raiser.cells.insert(1, nbformat.v4.new_code_cell("offset = int('one')"))
    raiser.cells[2].source = "def add(a, b):\n    return a + b + offset"
    _write(subs / "raiser", raiser)
    listed = nbformat.from_dict(solution)  # an exercise id saved as a list
    listed.cells[1].metadata["kit"]["exercise"] = ["0.1"]
    _write(subs / "listed", listed)
    (subs / "renamed").mkdir()
    nbformat.write(solution, subs / "renamed" / "00_fixture (1).ipynb")
    SOLUTIONS[subs] = solutions
    return subs, classgrade.grade(subs, solutions, jobs=2, timeout=LOOP_SECONDS, limits=LIMITS).table


def _solutions_of(subs: Path) -> Path:
    return SOLUTIONS[subs]


def _result(grades: pd.DataFrame, student: str) -> list[tuple[str, bool]]:
    rows = grades[grades.student == student]
    return list(zip(rows.exercise, rows.passed, strict=True))


@pytest.mark.kernel
@pytest.mark.sandbox
@pytest.mark.slow
def test_correct_submission_passes(graded):
    _, grades = graded
    assert _result(grades, "correct") == [("0.1", True), ("0.2", True)]
    assert _result(grades, "helper") == [("0.1", True), ("0.2", True)]
    assert _result(grades, "old") == [("0.1", True), ("0.2", True)]  # no cell ids
    assert (grades[grades.student == "old"]["flags"] == "").all()


@pytest.mark.kernel
@pytest.mark.sandbox
@pytest.mark.slow
def test_stub_submission_fails_with_not_implemented(graded):
    _, grades = graded
    stub = grades[grades.student == "stub"]
    assert not stub.passed.any()
    # shown as in the lab: the graded kernel has the kit's one-line display of unfinished work
    assert stub.error.tolist() == ["NotImplementedError: exercise 0.1 not done yet",
                                   "NotImplementedError: exercise 0.2 not done yet"]


@pytest.mark.kernel
@pytest.mark.sandbox
@pytest.mark.slow
def test_a_wrong_answer_is_told_what_differs(graded):
    _, grades = graded
    row = grades[(grades.student == "wrong") & (grades.exercise == "0.1")].iloc[0]
    assert not row.passed
    assert row.error.startswith("output differs from the reference: stdout, line 1: ")
    assert "was expected" in row.error


@pytest.mark.kernel
@pytest.mark.sandbox
@pytest.mark.slow
def test_hidden_checks_run_in_grading_and_catch_a_hard_coded_answer(graded):
    subs, grades = graded
    assert _result(grades, "hardcoded") == [("0.1", False), ("0.2", True)]
    row = grades[(grades.student == "hardcoded") & (grades.exercise == "0.1")].iloc[0]
    assert row.error == f"{DIFFERS} (a hidden check: a negative number and a fraction)"
    # 0.1's checks declare a quarter and three quarters of a point (partial credit): its
    # visible check passed
    assert (row.points, row.max_points) == (0.25, 1.0)
    verdict = gradebook.read_record(subs, "hardcoded", "00_fixture").exercises[0]
    # nothing of a hidden check is shown: its printed line may quote the check's own source
    assert verdict.hidden and verdict.got == "" and verdict.expected == ""


@pytest.mark.kernel
@pytest.mark.sandbox
@pytest.mark.slow
def test_cheats_are_failed_or_flagged(graded):
    _, grades = graded
    rows = grades.set_index(["student", "exercise"])
    assert "uses the kit's reference implementation (operator)" in rows.loc[("kitcopy", "0.1"), "flags"]
    # "3.0" typed in passes the visible check and is too short to call typed in (test_flags has
    # a longer one); the hard-coded add is failed by the hidden check (see above)
    assert rows.loc[("kitcopy", "0.2"), "passed"] and rows.loc[("kitcopy", "0.2"), "flags"] == ""
    # an added cell is flagged once, on the first exercise whose checks it can act on
    assert "redefines the builtin print" in rows.loc[("shadow", "0.1"), "flags"]
    assert "touches the kernel or interpreter (get_ipython)" in rows.loc[("replayer", "0.1"), "flags"]
    assert rows.loc[("shadow", "0.2"), "flags"] == "" and rows.loc[("replayer", "0.2"), "flags"] == ""
    assert rows.loc[("correct", "0.1"), "flags"] == "" and rows.loc[("helper", "0.2"), "flags"] == ""
    attackers = {"vandal", "lingerer", "peeker", "prober", "planter", "memfder"}  # tested below
    assert "patches np.allclose" in rows.loc[("patcher", "0.1"), "flags"]
    # the hidden check runs in the grader: a library patched in the kernel changes nothing there
    assert rows.loc[("patcher", "0.1"), "passed"]
    assert "imports by a computed name (importlib)" in rows.loc[("importer", "0.1"), "flags"]
    # print replaced by an object forges the visible check's line, not the grader's
    assert not rows.loc[("printer", "0.1"), "passed"]
    assert rows.loc[("printer", "0.1"), "error"].startswith(f"{DIFFERS} (a hidden check")
    assert "touches the kernel or interpreter (builtins, sys)" in rows.loc[("printer", "0.1"), "flags"]
    # a cell dressed as a hidden check ran in the kernel (it defined OFFSET there) and is flagged
    # for nothing of the grader's
    assert rows.loc[("dressed", "0.1"), "passed"]
    assert set(summaries.flagged(grades).student) - attackers == {
        "kitcopy", "shadow", "replayer", "patcher", "importer", "framewalker", "finalizer", "printer"}


@pytest.mark.kernel
@pytest.mark.sandbox
@pytest.mark.slow
@pytest.mark.parametrize("student", ["framewalker", "finalizer"])
def test_a_hidden_check_never_reaches_the_kernel_so_no_frame_of_it_can_be_read(graded, student):
    subs, grades = graded
    # the hidden check called add (a correct one) from the grader; what the student's code
    # found on the kernel's stack is only the kernel's own way of answering a call
    assert _result(grades, student) == [("0.1", True), ("0.2", False)]
    row = grades[(grades.student == student) & (grades.exercise == "0.2")].iloc[0]
    assert row.error.startswith("ValueError: ")
    assert "looks into the running program" in grades[grades.student == student]["flags"].iloc[0]
    shown = [path.read_text() for path in layout.feedback_paths(subs, student, "00_fixture")]
    shown.append(json.dumps(gradebook.read_record(subs, student, "00_fixture").to_json()))
    hidden_source = [cell for cell in nbformat.read(FIXTURES / NAME, as_version=4).cells
                     if cells.is_hidden(cell)][0].source
    for text in shown:
        # nothing to hide: the scrubber of hidden check lines found none
        assert "student.add" not in text and "secret_rng" not in text and HIDDEN_CODE not in text
        assert not any(line.strip() in text for line in hidden_source.splitlines() if len(line.strip()) > 20)


@pytest.mark.kernel
@pytest.mark.sandbox
@pytest.mark.slow
def test_editing_checks_or_outputs_does_not_pass(graded):
    _, grades = graded
    assert _result(grades, "cheater") == [("0.1", False), ("0.2", False)]


@pytest.mark.kernel
@pytest.mark.sandbox
@pytest.mark.slow
def test_corrupt_missing_loop_and_dead_kernel_are_recorded(graded):
    subs, grades = graded
    by = grades.set_index(["student", "exercise"])
    assert by.loc[("corrupt", "0.1"), "error"].startswith("not a readable notebook")
    assert by.loc[("absent", "0.2"), "error"] == "notebook missing"
    assert "Timeout" in by.loc[("loop", "0.1"), "error"]
    assert by.loc[("loop", "0.2"), "passed"]  # the kernel was interrupted; the rest ran
    assert by.loc[("killer", "0.1"), "error"] == "the kernel died (exit code 1)"
    assert by.loc[("killer", "0.2"), "error"] == "not run: the kernel died in an earlier cell"
    # said as a dead kernel (the plugin saw it die), not as nbval's timeout after the cell's limit
    assert "Timeout" not in by.loc[("killer", "0.1"), "error"]
    assert by.loc[("deaf", "0.1"), "error"].startswith(f"Timeout of {LOOP_SECONDS:g} seconds exceeded")
    assert by.loc[("deaf", "0.2"), "error"] == "not run: an earlier cell timed out"


@pytest.mark.kernel
@pytest.mark.sandbox
@pytest.mark.slow
def test_a_run_stopped_midway_keeps_the_exercises_that_passed_before(graded):
    subs, grades = graded
    by = grades.set_index(["student", "exercise"])
    assert by.loc[("stopper", "0.1"), "passed"]
    stopped = f"grading stopped: it used more than {LIMITS.memory_mb} MB of memory in all"
    assert by.loc[("stopper", "0.2"), "error"] == stopped
    record = gradebook.read_record(subs, "stopper", "00_fixture")
    assert (record.problem, record.problem_line) == (Problem.OVER_LIMIT, stopped)
    assert record.exercises[1].stopped and not record.problem.regrade


@pytest.mark.kernel
@pytest.mark.sandbox
@pytest.mark.slow
def test_grades_csv_and_summary(graded):
    subs, grades = graded
    written = pd.read_csv(subs / "grades.csv", keep_default_na=False, dtype={"exercise": str})
    assert list(written.columns) == gradebook.GRADES_COLUMNS
    assert len(written) == 2 * len(classgrade.students_in(subs))
    table = summaries.summary(grades)
    assert table.loc["correct", "total"] == 2.0 and table.loc["correct", "max_total"] == 2.0
    assert table.loc["stub", "00_fixture"] == 0.0


@pytest.mark.kernel
@pytest.mark.sandbox
@pytest.mark.slow
def test_student_code_cannot_touch_classmates_grades_code_or_caches(graded):
    subs, grades = graded
    solution = nbformat.read(FIXTURES / NAME, as_version=4)
    assert nbformat.read(subs / "correct" / NAME, as_version=4).cells[1].source == solution.cells[1].source
    assert not (REPO / "helpers" / "nbval_hooks.py").exists()
    assert (Path(os.environ["KIT_DATA_DIR"]) / "results" / "canary.csv").read_text() == CANARY
    assert _result(grades, "vandal") == [("0.1", True), ("0.2", False)]  # each attempt was refused
    assert _result(grades, "correct") == [("0.1", True), ("0.2", True)]
    assert set(grades.student) >= {"correct", "vandal", "stub"}  # grades.csv was not deleted
    assert (subs / "grades.csv").is_file()


@pytest.mark.kernel
@pytest.mark.sandbox
@pytest.mark.slow
def test_no_process_outlives_its_run(graded):
    subs, grades = graded
    assert _result(grades, "lingerer")[0] == ("0.1", True)
    left = [p.info["cmdline"] for p in psutil.process_iter(["cmdline"])
            if LINGER in " ".join(p.info["cmdline"] or [])]
    assert left == []


@pytest.mark.kernel
@pytest.mark.sandbox
@pytest.mark.slow
def test_memory_output_processes_and_network_are_capped(graded):
    _, grades = graded
    by = grades.set_index(["student", "exercise"])
    assert by.loc[("hog", "0.1"), "error"].startswith("MemoryError")
    assert by.loc[("talker", "0.1"), "error"].startswith("output limit: this cell took the notebook")
    assert by.loc[("talker", "0.2"), "error"].startswith("not run: the notebook showed more than")
    limit = LIMITS.processes
    # the process limit counts threads too: it refuses the thread, or the watch stops the job
    assert not by.loc[("threader", "0.1"), "passed"]
    assert by.loc[("threader", "0.1"), "error"] in (
        "RuntimeError: can't start new thread (line 4: threading.Thread(target=time.sleep, "
        "args=(60,), daemon=True).start())",
        f"grading stopped: it ran more than {limit} processes and threads at once")
    # a fork bomb meets three caps, whichever holds first: the job's process limit refuses the
    # fork (EAGAIN, raised in the student's cell), or the watch stops the job for its processes
    # or for their memory
    assert not by.loc[("forker", "0.1"), "passed"]
    assert by.loc[("forker", "0.1"), "error"] in (
        "BlockingIOError: [Errno 11] Resource temporarily unavailable (line 3: if os.fork() == 0:)",
        f"grading stopped: it ran more than {limit} processes and threads at once",
        f"grading stopped: it used more than {LIMITS.memory_mb} MB of memory in all")
    assert by.loc[("offline", "0.1"), "passed"]  # only the loopback interface in the sandbox
    assert by.loc[("peeker", "0.1"), "error"].startswith("AssertionError: no notebook to read")
    assert by.loc[("prober", "0.1"), "passed"], by.loc[("prober", "0.1"), "error"]
    assert _result(grades, "planter")[0] == ("0.1", True)  # no module it wrote ran in pytest
    assert by.loc[("memfder", "0.1"), "error"] == \
        f"grading stopped: it used more than {LIMITS.memory_mb} MB of memory in all"
    assert by.loc[("filler", "0.1"), "error"].startswith("OSError: [Errno 28] No space left on device")


@pytest.mark.kernel
@pytest.mark.sandbox
@pytest.mark.slow
def test_the_report_cannot_be_forged(graded):
    _, grades = graded
    by = grades.set_index(["student", "exercise"])
    assert by.loc[("forger", "0.1"), "error"].startswith("output differs from the reference")


@pytest.mark.kernel
@pytest.mark.sandbox
@pytest.mark.slow
def test_odd_submissions_get_a_precise_reason(graded):
    subs, grades = graded
    by = grades.set_index(["student", "exercise"])
    assert by.loc[("skipper", "0.1"), "error"] == "not run: the cell is marked NBVAL_SKIP"
    assert _result(grades, "listed") == [("0.1", True), ("0.2", True)]
    assert by.loc[("raiser", "0.1"), "error"].startswith("NameError: name 'offset' is not defined")
    assert by.loc[("raiser", "0.1"), "error"].endswith(
        "(earlier, your added cell 'offset = int('one')' raised ValueError: invalid literal for int() "
        "with base 10: 'one' (line 1: offset = int('one')))")
    assert _result(grades, "renamed") == [("0.1", True), ("0.2", True)]
    renamed = gradebook.read_record(subs, "renamed", "00_fixture")
    assert renamed.file == "00_fixture (1).ipynb" and "matched by its exercises" in renamed.note
    assert _result(grades, "old") == _result(grades, "helper")


@pytest.mark.kernel
@pytest.mark.sandbox
@pytest.mark.slow
def test_feedback_for_every_student_shows_expected_and_got(graded):
    subs, grades = graded
    for student in set(grades.student):
        html, markdown = layout.feedback_paths(subs, student, "00_fixture")
        assert html.is_file() and markdown.is_file()
    html, markdown = layout.feedback_paths(subs, "wrong", "00_fixture")
    text = markdown.read_text()
    assert "expected (reference)" in text and "got (your output)" in text and "-1" in text
    hidden = layout.feedback_paths(subs, "hardcoded", "00_fixture")[1].read_text()
    assert "hidden check" in hidden
    # neither what the hidden check prints nor its code (the run's footer may hold "130.5 MB")
    for secret in ("add up", "secret_rng", "rng.integers", "+ 0.5"):
        assert secret not in hidden, secret
    assert "0.25 / 1 (the checks that passed)" in hidden  # its visible check's points


@pytest.mark.kernel
@pytest.mark.sandbox
@pytest.mark.slow
def test_grading_again_skips_what_is_graded_and_merges_a_regrade(graded, capsys):
    subs, grades = graded
    before = {r.student: r.graded_at for r in gradebook.read_records(subs)}
    again = classgrade.grade(subs, _solutions_of(subs), timeout=LOOP_SECONDS, limits=LIMITS)
    pd.testing.assert_frame_equal(again.table, grades)
    assert again.graded == []
    assert {r.student: r.graded_at for r in gradebook.read_records(subs)} == before
    wrong = nbformat.read(subs / "wrong" / NAME, as_version=4)
    wrong.cells[1].source = SOLVED_ADD
    nbformat.write(wrong, subs / "wrong" / NAME)
    regraded = classgrade.grade(subs, _solutions_of(subs), timeout=LOOP_SECONDS, student="wrong",
                                limits=LIMITS)
    after = {r.student: r.graded_at for r in gradebook.read_records(subs)}
    assert [s for s in after if after[s] != before[s]] == ["wrong"]
    assert [record.student for record in regraded.graded] == ["wrong"]
    assert _result(regraded.table, "wrong")[0] == ("0.1", True)
    assert len(regraded.table) == len(grades)  # merged into the class table, not replacing it


@pytest.mark.kernel
def test_the_grader_s_pytest_takes_no_options_meant_for_another(tmp_path, monkeypatch):
    """PYTEST_ADDOPTS and PYTEST_PLUGINS, a user's or an outer test run's, are not for the
    kit's own nbval run (a plugin it cannot import would stop it before any cell ran)."""
    path = tmp_path / "x.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print(1)")]), path)
    monkeypatch.setenv("PYTEST_ADDOPTS", "-p a_plugin_nobody_has")
    monkeypatch.setenv("PYTEST_PLUGINS", "another_plugin_nobody_has")
    run = nbval_run.run_notebook(path, 60)
    assert run.problem is Problem.NONE and [r.ending for r in run.results.values()] == [Ending.PASSED], run


def test_graded_notebook_restores_reference_cells():
    solution = nbformat.read(FIXTURES / NAME, as_version=4)
    reference = release.release_notebook(solution)
    submission = nbformat.from_dict(reference)
    submission.cells[2].source = "print(5)"
    submission.cells[2].outputs = []
    merged = merge.graded_notebook(reference, submission)
    assert merged.cells[2].source == reference.cells[2].source
    assert merged.cells[2].outputs == reference.cells[2].outputs


@pytest.mark.kernel
@pytest.mark.sandbox
@pytest.mark.slow
def test_a_correct_notebook_reads_the_prepared_caches_and_rebuilds_nothing(corpora, tmp_path, monkeypatch):
    # Notebook 03 cross-validates NB and SVM-BOW: prepared once, a student's run only reads
    # them. With the strict setting, a cache the sandboxed run had to store would fail a cell.
    monkeypatch.setenv(settings.STRICT_CACHE_ENV, "1")
    monkeypatch.setenv("KIT_DATA_DIR", str(corpora))  # the data folder (this module's class has its own)
    student = tmp_path / "class" / "alice"
    student.mkdir(parents=True)
    shutil.copy(settings.REPO_ROOT / "solutions" / "03_significance.ipynb", student)
    grades = classgrade.grade(tmp_path / "class", notebook="03", jobs=1).table
    assert grades.passed.all(), grades.error.tolist()
    assert "03_significance" in json.loads(classgrade.prepared_path().read_text())


def _with_points(exercise: object = None, *checks: object) -> nbformat.NotebookNode:
    """An exercise with two visible checks, points declared as given (None: not declared)."""
    check = "# NBVAL_CHECK_OUTPUT\nprint(x)"
    cells = [nbformat.v4.new_code_cell("x = 1", metadata={"kit": {"exercise": "1.1"}}),
             *(nbformat.v4.new_code_cell(check, metadata={"kit": {"checks": "1.1"}}) for _ in range(2))]
    for cell, points in zip(cells, (exercise, *checks), strict=False):
        if points is not None:
            cell.metadata["kit"]["points"] = points
    return nbformat.v4.new_notebook(cells=cells)


def test_an_exercise_is_worth_its_checks_points_when_they_declare_them():
    assert grading.points_of(_with_points()) == {"1.1": 1.0}
    assert grading.points_of(_with_points(3)) == {"1.1": 3.0}
    solution = _with_points(None, 2, 0.5)
    assert grading.points_of(solution) == {"1.1": 2.5}
    assert list(grading.check_points_of(solution).values()) == [2.0, 0.5]
    with pytest.raises(KitError, match="others do not"):
        grading.points_of(_with_points(None, 2))
    with pytest.raises(KitError, match="not both"):
        grading.points_of(_with_points(3, 2, 1))
    with pytest.raises(KitError, match="a check of exercise 1.1: points must be a positive number"):
        grading.points_of(_with_points(None, 2, -1))


def test_prepares_running_at_once_keep_each_other_s_records(empty_data_dir, monkeypatch):
    # kit grade --prepare in two processes at once (an instructor and a CI job) on one data folder
    names = [f"{n:02d}_notebook" for n in range(16)]
    read = classgrade._read_prepared

    def slowly() -> dict:  # between reading and writing, another may read: lost without the lock
        found = read()
        time.sleep(0.01)
        return found

    monkeypatch.setattr(classgrade, "_read_prepared", slowly)
    with ThreadPoolExecutor(4) as pool:
        list(pool.map(lambda name: classgrade._record_prepared(name, {"sha256": name, "seconds": 1}), names))
    assert sorted(json.loads(classgrade.prepared_path().read_text())) == names


def test_a_solution_is_prepared_again_when_it_or_the_library_changed(empty_data_dir, tmp_path, monkeypatch):
    """A preparation is kept for the solution and the library it ran under: a new library may
    build its caches otherwise, or build new ones, which a student's sandboxed run cannot store."""
    solutions = tmp_path / "solutions"
    solutions.mkdir()
    shutil.copy(settings.REPO_ROOT / "solutions" / "03_significance.ipynb", solutions)
    graded = []

    def grade_notebook(solution, reference, submission, scratch, timeout):  # not the run: what is run
        graded.append(solution.metadata.get("changed", "original"))
        return nbval_run.NotebookRun(results={}), []

    monkeypatch.setattr(grading, "grade_notebook", grade_notebook)
    assert classgrade.prepare(solutions) == ["03_significance"]
    assert classgrade.prepare(solutions) == []
    monkeypatch.setattr(classgrade, "library_digest", lambda: "a library changed since")
    assert classgrade.prepare(solutions) == ["03_significance"]
    assert classgrade.prepare(solutions) == []
    solution = nbformat.read(solutions / "03_significance.ipynb", as_version=4)
    solution.metadata["changed"] = "the solution"
    nbformat.write(solution, solutions / "03_significance.ipynb")
    assert classgrade.prepare(solutions) == ["03_significance"]
    assert graded == ["original", "original", "the solution"]
    assert classgrade.prepare(solutions, force=True) == ["03_significance"]


def test_the_library_digest_follows_the_library_s_code_not_its_tooling(tmp_path):
    (tmp_path / "course").mkdir()
    (tmp_path / "data.py").write_text("x = 1\n")
    (tmp_path / "course" / "tool.py").write_text("y = 1\n")
    first = classgrade.library_digest(tmp_path)
    (tmp_path / "course" / "tool.py").write_text("y = 2\n")
    (tmp_path / "data.py").write_bytes(b"x = 1\r\n")  # git on Windows: the same file
    assert classgrade.library_digest(tmp_path) == first
    (tmp_path / "data.py").write_text("x = 2\n")
    second = classgrade.library_digest(tmp_path)
    (tmp_path / "new.py").write_text("")
    assert len({first, second, classgrade.library_digest(tmp_path)}) == 3
    assert classgrade.library_digest() != first  # the kit's own library by default


@pytest.mark.kernel
@pytest.mark.sandbox
@pytest.mark.slow
def test_a_local_dask_cluster_grades_a_class_end_to_end(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("KIT_DATA_DIR", str(tmp_path / "data"))
    solution = nbformat.read(FIXTURES / NAME, as_version=4)
    _write(tmp_path / "class" / "correct", solution)
    _write(tmp_path / "class" / "stub", release.release_notebook(solution))
    subs = tmp_path / "class"
    grades = classgrade.grade(subs, FIXTURES, timeout=LOOP_SECONDS, scheduler="local:2").table
    assert _result(grades, "correct") == [("0.1", True), ("0.2", True)]
    assert _result(grades, "stub") == [("0.1", False), ("0.2", False)]
    assert main(["grade", str(subs), "--summary"]) == 0
    out = capsys.readouterr().out
    assert "pass_rate" in out and (subs / layout.SUMMARY_FILE).is_file()
    written = pd.read_csv(subs / layout.SUMMARY_FILE)
    assert written.set_index("student").loc["correct", "total"] == 2.0
    for path in layout.feedback_paths(subs, "stub", "00_fixture"):
        path.unlink()
    assert main(["grade", str(subs), "--feedback-only"]) == 0
    assert all(p.is_file() for p in layout.feedback_paths(subs, "stub", "00_fixture"))


@pytest.mark.parametrize("argument", [["--timeout", "-1"], ["--timeout", "nan"], ["--jobs", "0"],
                                      ["--memory-mb", "0"], ["--scheduler", "local:0"],
                                      ["--notebook", "x1"]])
def test_grade_arguments_are_validated(tmp_path, capsys, argument):
    with pytest.raises(SystemExit):
        main(["grade", str(tmp_path), *argument])
    assert "error: argument" in capsys.readouterr().err


def test_empty_or_missing_folder_is_a_clear_error(tmp_path, capsys):
    with pytest.raises(KitError, match="no student folders"):
        classgrade.grade(tmp_path, FIXTURES)
    assert main(["grade", str(tmp_path / "nowhere")]) == 1
    assert "is not a folder of student submissions" in capsys.readouterr().err


def test_a_folder_where_no_subfolder_holds_a_notebook_is_not_a_class(tmp_path, capsys):
    for name in ("src", "docs", "build"):  # e.g. a project folder given by mistake
        (tmp_path / name).mkdir()
        (tmp_path / name / "notes.txt").write_text("not a submission")
    assert main(["grade", str(tmp_path)]) == 1
    assert "None of the 3 folder(s)" in capsys.readouterr().err
    assert not (tmp_path / layout.GRADES_FILE).exists()


@pytest.mark.kernel
@pytest.mark.sandbox
@pytest.mark.slow
def test_a_declared_tolerance_allows_that_many_last_digit_units_and_no_more(graded):
    _, grades = graded
    assert _result(grades, "near") == [("0.1", True), ("0.2", True)]
    assert _result(grades, "far") == [("0.1", True), ("0.2", False)]
    far = grades[(grades.student == "far") & (grades.exercise == "0.2")].iloc[0]
    assert "3.4 where 3.0 was expected (allowed ± 0.3)" in far.error


def test_cells_without_ids_take_the_reference_ids():
    solution = nbformat.read(FIXTURES / NAME, as_version=4)
    reference = release.release_notebook(solution, hidden=True)
    old = nbformat.from_dict(release.release_notebook(solution))
    old.cells.insert(2, nbformat.v4.new_code_cell("x = 1"))
    old.cells[1].source = "def add(a, b):\n    return a + b"  # the exercise, answered
    for cell in old.cells:
        del cell["id"]
    filled = merge.with_cell_ids(old, reference)
    assert [c.id for c in filled.cells if c.source != "x = 1"] == [
        c.id for c in reference.cells if not cells.is_hidden(c)]
    assert [c.id for c in filled.cells if c.source == "x = 1"] == ["student-2"]
    assert all("id" not in c for c in old.cells)  # the submission itself is not changed


def test_a_notebook_without_ids_whose_cells_were_edited_runs_each_cell_once():
    solution = nbformat.read(FIXTURES / NAME, as_version=4)
    reference = release.release_notebook(solution, hidden=True)
    old = nbformat.from_dict(release.release_notebook(solution))
    for cell in old.cells:
        del cell["id"]
        cell.source += "\n# edited"
    old.cells.append(nbformat.v4.new_code_cell("print('mine')"))
    del old.cells[-1]["id"]
    merged = merge.graded_notebook(reference, old)
    added = f"student-{len(old.cells) - 1}"
    assert [c.id for c in merged.cells] == [*(c.id for c in reference.cells), added]


@pytest.mark.kernel
@pytest.mark.slow
def test_each_variant_starts_from_the_state_before_its_exercise(tmp_path):
    # Cells between 0.1 and its check compute what the check prints (and a name 0.2's check
    # uses): a broken answer must not pass on the value the previous answer left in the
    # kernel, and must not be charged to 0.2.
    solution = nbformat.read(FIXTURES / NAME, as_version=4)
    three = nbformat.v4.new_code_cell("three = 3")
    three.id = "00-001-three"
    computed = nbformat.v4.new_code_cell("result = add(2, 3)")
    computed.id = "00-001-computed"
    solution.cells[2].source = "# NBVAL_CHECK_OUTPUT\nprint(result)"
    solution.cells[1:4] = [solution.cells[1], three, computed, solution.cells[2]]  # no hidden check
    solution.cells[6].source = "# NBVAL_CHECK_OUTPUT\nprint(mean([1, 2, three, 6]))"
    answers = {"0.1": [solution.cells[1].source, "add = None", solution.cells[1].source],
               "0.2": [solution.cells[5].source, "def mean(values):\n    return 0", solution.cells[5].source]}
    results = grading_harness.grade_variants(solution, answers, tmp_path, until={"0.1": [None, None, "0.1"]})
    first, second = ([{ex_id: (v.status, v.reason, v.position) for ex_id, v in run.items()}
                      for run in results[exercise]] for exercise in ("0.1", "0.2"))
    solved = (Status.PASSED, "", None)
    assert first[0] == {"0.1": solved, "0.2": solved} and first[2] == {"0.1": solved}
    assert second[0] == second[2] == {"0.2": solved}
    status, reason, position = first[1]["0.1"]
    assert status is Status.FAILED and reason.startswith("NameError") and position == 1
    assert first[1]["0.2"] == solved  # a wrong 0.1 is not charged to 0.2
    assert second[1]["0.2"][0] is Status.FAILED and second[1]["0.2"][2] == 1


@pytest.mark.kernel
@pytest.mark.slow
def test_no_cell_may_outlast_the_whole_run_and_what_ended_before_a_stop_is_kept(tmp_path):
    solution = nbformat.read(FIXTURES / NAME, as_version=4)
    looping = release.release_notebook(solution)
    looping.cells[1].source = SOLVED_ADD
    looping.cells[3].source = "def mean(values):\n    while True:\n        pass"
    reference = release.release_notebook(solution, NAME, hidden=True)
    run, verdicts = grading.grade_notebook(solution, reference, looping, tmp_path, timeout=1200,
                                           job=Job(budget=nbval_run.RUN_OVERHEAD + 5))
    # the loop is stopped as its cell's timeout (cut to what the run may take), not by the run's
    assert (run.problem, run.problem_line) == (Problem.NONE, "")
    assert verdicts[1].stopped and not verdicts[0].stopped
    assert [(v.exercise, v.passed) for v in verdicts] == [("0.1", True), ("0.2", False)]
    assert verdicts[1].reason.startswith("Timeout of 5 seconds exceeded")


def _holding(folder: Path, name: str, ids: list[str], mtime: float | None = None) -> Path:
    """A student's file whose exercise cells carry ``ids``."""
    cells = [nbformat.v4.new_code_cell("pass", metadata={"kit": {"exercise": i}}) for i in ids]
    path = folder / name
    nbformat.write(nbformat.v4.new_notebook(cells=cells), path)
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


def test_a_notebook_saved_under_another_name_is_named_not_run(tmp_path):
    others = {"02_svm": {"2.1", "2.2"}}
    wanted = {"1.1", "1.2"}
    _holding(tmp_path, "01_naive_bayes.ipynb", ["2.1", "2.2"])  # 02's work under 01's name
    path, _, problem = classgrade.find_submission(tmp_path, "01_naive_bayes", wanted, others)
    assert path is None
    assert problem == "01_naive_bayes.ipynb holds 02_svm's exercises (2.1, 2.2), not this notebook's"
    (tmp_path / "01_naive_bayes.ipynb").unlink()
    _holding(tmp_path, "02_svm.ipynb", ["1.1", "1.2"])  # 01's work under 02's name
    path, _, problem = classgrade.find_submission(tmp_path, "01_naive_bayes", wanted, others)
    assert path is None and problem == ("notebook missing (02_svm.ipynb holds this notebook's exercises: "
                                        "rename it 01_naive_bayes.ipynb)")


def test_a_misnamed_file_gives_way_to_a_copy_that_holds_the_notebook_and_a_folder_is_no_file(tmp_path):
    _holding(tmp_path, "01_naive_bayes.ipynb", ["2.1"])  # 02's work under 01's name
    right = _holding(tmp_path, "01_naive_bayes (1).ipynb", ["1.1", "1.2"])
    path, note, problem = classgrade.find_submission(tmp_path, "01_naive_bayes", {"1.1", "1.2"},
                                                     {"02_svm": {"2.1"}})
    assert (path, problem) == (right, "")
    assert note.startswith("graded '01_naive_bayes (1).ipynb' (01_naive_bayes.ipynb holds 02_svm's exercises")
    folder = tmp_path / "folder"
    (folder / "01_naive_bayes.ipynb").mkdir(parents=True)  # a folder named like the notebook
    assert classgrade.find_submission(folder, "01_naive_bayes", {"1.1"}, {}) == (None, "", "notebook missing")


def test_a_newer_copy_beside_the_named_file_is_noted(tmp_path):
    named = _holding(tmp_path, "01_naive_bayes.ipynb", ["1.1", "1.2"], mtime=1_000_000)
    _holding(tmp_path, "01_naive_bayes (1).ipynb", ["1.1", "1.2"], mtime=2_000_000)
    path, note, problem = classgrade.find_submission(tmp_path, "01_naive_bayes", {"1.1", "1.2"}, {})
    assert (path, problem) == (named, "")
    assert note == "also holding its exercises, newer than 01_naive_bayes.ipynb: 01_naive_bayes (1).ipynb"


@pytest.mark.parametrize("problem", list(Problem))
def test_only_a_record_whose_grading_failed_is_graded_again(tmp_path, problem):
    folder = tmp_path / "alice"
    _write(folder, nbformat.read(FIXTURES / NAME, as_version=4))
    record = Record("alice", "00_fixture", NAME, classgrade.sha256_of(FIXTURES / NAME),
                    "2026-11-26T12:00:00+00:00", submission_sha256=classgrade.sha256_of(folder / NAME),
                    problem=problem)
    assert classgrade._unchanged(record, folder, FIXTURES / NAME) is not problem.regrade
    assert problem.regrade is (problem is Problem.NOT_STARTED)
