"""The grading guard: sealed hidden checks, and the audit hook that keeps student code off them.

An audit hook cannot be removed, so each behaviour runs in a child Python that installs it.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from helpers.course.engine import guard
from helpers.errors import KitError

#: A hang guard, not a speed target: a child importing pandas on a loaded machine can take minutes.
CHILD_SECONDS = 900

HIDDEN_CELL = """# NBVAL_CHECK_OUTPUT
### BEGIN HIDDEN CHECKS
# Intent: unbalanced classes
_mine = nb_fit(_X, _y, alpha=0.5)
print(_mine)
### END HIDDEN CHECKS"""


def test_a_sealed_check_keeps_its_markers_and_intent_and_opens_only_with_its_key():
    key = guard.new_key()
    sealed = guard.sealed_source(HIDDEN_CELL, key)
    assert "nb_fit" not in sealed and "alpha" not in sealed
    lines = sealed.splitlines()
    assert lines[:3] == HIDDEN_CELL.splitlines()[:3] and lines[-1] == "### END HIDDEN CHECKS"
    [call] = [line for line in lines if guard.HIDDEN_EVENT in line]
    token = call.split(", ")[1].rstrip(")").strip("'")
    plain = "_mine = nb_fit(_X, _y, alpha=0.5)\nprint(_mine)"
    assert guard.unseal(token, key) == plain
    try:
        assert guard.unseal(token, guard.new_key()) != plain
    except UnicodeDecodeError:  # another key gives bytes that are not even text
        pass
    assert guard.seal("x = 1", key) != guard.seal("x = 1", key)  # a fresh nonce each time


def test_sealing_needs_both_markers():
    with pytest.raises(KitError, match="needs both of its markers"):
        guard.sealed_source("### BEGIN HIDDEN CHECKS\nprint(1)", guard.new_key())


def test_the_key_is_read_once_and_its_file_deleted(tmp_path, monkeypatch):
    path = tmp_path / "key"
    key = guard.new_key()
    path.write_bytes(key)
    monkeypatch.setenv(guard.KEY_FILE_ENV, str(path))
    assert guard.read_key() == key
    assert not path.exists() and guard.KEY_FILE_ENV not in __import__("os").environ
    with pytest.raises(KitError, match="only for grading"):
        guard.read_key()
    path.write_bytes(b"short")
    monkeypatch.setenv(guard.KEY_FILE_ENV, str(path))
    with pytest.raises(KitError, match="32 bytes"):
        guard.read_key()


#: Student code, compiled under a notebook cell's file name: attacks, and honest library use.
STUDENT = '''
import collections, gc, inspect, logging, sys, traceback
import pandas as pd

def getframe():
    return sys._getframe(1).f_code.co_filename
def by_inspect():
    return inspect.currentframe().f_back.f_globals["_secret"]
def by_traceback():
    try:
        raise ValueError
    except ValueError as err:
        return err.__traceback__.tb_frame.f_back
def by_stack():
    return traceback.extract_stack()[-2].line
def by_all_frames():
    return sys._current_frames()
def honest():
    point = collections.namedtuple("Point", "x y")(1, 2)
    frame = pd.DataFrame({"a": [1.0, 2.0]})
    return int(point.y + frame.a.sum())

from helpers.course.engine import guard as _guard
_guard.WHILE_HIDDEN = frozenset()  # the hook holds its own
'''

#: Student code that replaces what a check might use, each way; the hidden check does not run.
TAMPERING = {
    "guard's unseal": "from helpers.course.engine import guard as _guard\n"
                      "_guard.unseal = lambda *a: \"print('spied')\"",
    "builtins' compile": "import builtins\n_c = builtins.compile\n"
                         "builtins.compile = lambda s, *a, **k: _c(\"print('spied')\", *a, **k)",
    "np.allclose": "import numpy as np\nnp.allclose = lambda *a, **k: True",
    "an exec'd lambda": "import numpy\nexec('import numpy; numpy.array_equal = lambda *a: True')",
    "a partial of theirs": "import functools, numpy\ndef _yes(*a, **k):\n    return True\n"
                           "numpy.isclose = functools.partial(_yes)",
    "a method of theirs": "import json\nclass _J:\n    def dumps(self, *a):\n        return '1'\n"
                          "json.dumps = _J().dumps",
    "a lambda whose __module__ is an object of theirs":
        "import numpy\nclass _M:\n    def __eq__(self, other):\n"
        "        raise SystemExit('their code ran in the guard')\n    __hash__ = None\n"
        "exec('import numpy; numpy.array_equal = lambda *a: True')\nnumpy.array_equal.__module__ = _M()",
    "a module in numpy's place": "import sys, types\n_fake = types.ModuleType('numpy')\n"
                                 "_fake.allclose = lambda *a: True\nsys.modules['numpy'] = _fake",
}

#: The hidden check: it calls each, and prints what came of it.
HIDDEN = '''
_secret = "the hidden check's own value"
for _probe in (getframe, by_inspect, by_traceback, by_stack, by_all_frames, honest):
    try:
        print(_probe.__name__, "gave", repr(_probe())[:40])
    except PermissionError as _err:
        print(_probe.__name__, "refused")
'''

#: Refused at any time, not only under a hidden check.
ANYTIME = '''
import ctypes, gc, sys
from helpers.course.engine import guard as _guard
_guard.ALWAYS, _guard.FRAME_ATTRIBUTES, _guard.unseal = frozenset(), {}, None  # the hook holds its own
def gen():
    yield 1
def own_hook():  # Python drops a hook that an existing one refuses, without an error
    seen = []
    sys.addaudithook(lambda event, args: seen.append(event))
    compile("1", "<theirs>", "eval")
    if not seen:
        raise PermissionError("not added")
def traceback_frame():
    try:
        raise ValueError
    except ValueError as err:
        return err.__traceback__.tb_frame
for name, attempt in [("gc", lambda: gc.get_objects()), ("trace", lambda: sys.settrace(lambda *a: None)),
                      ("generator frame", lambda: gen().gi_frame),
                      ("proc memory", lambda: open("/proc/self/mem", "rb")),
                      ("proc by a detour", lambda: open("/proc/../proc/./self//mem", "rb")),
                      ("ctypes", lambda: ctypes.string_at(id(name), 8)),
                      ("an audit hook of theirs", own_hook),
                      ("a traceback's frame", traceback_frame),
                      ("library file name", lambda: compile("x = 1", sys.modules["json"].__file__, "exec"))]:
    try:
        attempt()
        print(name, "allowed")
    except PermissionError:
        print(name, "refused")
print("own frame outside hidden:", sys._getframe().f_code.co_name)
'''


def _in_child(key_holder: str, student: str = STUDENT) -> list[str]:
    """Run ``key_holder``'s scenario in a child Python with the guard installed, after ``student``."""
    script = "\n".join([
        "import json, sys", "from helpers.course.engine import guard", "key = guard.new_key()",
        "guard.install(key)", 'names = {"__name__": "__main__"}',
        "build = compile  # as IPython compiles cells: with its own reference, whatever the student replaces",
        f"exec(build({student!r}, '/tmp/ipykernel_7/1.py', 'exec'), names)", key_holder])
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=CHILD_SECONDS, check=True)
    return done.stdout.splitlines()


def test_student_code_called_by_a_hidden_check_cannot_reach_its_frame():
    cell = f"__import__('sys').audit({guard.HIDDEN_EVENT!r}, guard.seal({HIDDEN!r}, key))"
    lines = _in_child(f"exec(build({cell!r}, '/tmp/ipykernel_7/2.py', 'exec'), {{**names, 'guard': guard, "
                      f"'key': key}})\nprint(json.dumps(sorted(n for n in names if n.startswith('_s'))))")
    assert lines[:5] == [f"{name} refused" for name in
                         ("getframe", "by_inspect", "by_traceback", "by_stack", "by_all_frames")]
    assert lines[5] == "honest gave 5"  # libraries keep their own uses of frames
    assert json.loads(lines[6]) == []  # the check's names stay out of the notebook's


def _hidden_cell(code: str) -> str:
    cell = f"__import__('sys').audit({guard.HIDDEN_EVENT!r}, guard.seal({code!r}, key))"
    run = f"exec(build({cell!r}, '/tmp/ipykernel_7/2.py', 'exec'), {{**names, 'guard': guard, 'key': key}})"
    return f"try:\n    {run}\nexcept PermissionError as err:\n    print('refused:', err)"


@pytest.mark.parametrize("way", list(TAMPERING))
def test_a_hidden_check_does_not_run_once_student_code_replaced_what_it_might_use(way):
    lines = _in_child(_hidden_cell("print('the check ran')"), student=TAMPERING[way])
    assert len(lines) == 1 and lines[0].startswith("refused: grading: student code replaced "), lines
    assert "the check ran" not in lines[0]


def test_a_hidden_check_sees_the_builtins_not_the_student_s_names_for_them():
    shadow = "def print(*a, **k):\n    pass\nlen = lambda x: 300\nimport numpy as np\nscore = np.mean"
    check = "print('ran, len', len([1, 2]), 'score', score([1.0, 3.0]))"
    lines = _in_child(_hidden_cell(check), student=shadow)
    assert lines == ["ran, len 2 score 2.0"]  # their own names (score) stay; print and len are Python's
    honest = "import numpy as np, pandas as pd\ndef nb_fit(x):\n    return np.mean(x)"
    assert _in_child(_hidden_cell("print('fit', nb_fit([1.0, 2.0]))"), student=honest) == ["fit 1.5"]


def test_some_ways_in_are_refused_at_any_time_and_the_rest_only_under_a_hidden_check():
    lines = _in_child(f"exec(build({ANYTIME!r}, '/tmp/ipykernel_7/3.py', 'exec'), names)")
    refused = ("gc", "trace", "generator frame", "proc memory", "proc by a detour", "ctypes",
               "an audit hook of theirs", "a traceback's frame", "library file name")
    assert lines == [f"{name} refused" for name in refused] + ["own frame outside hidden: <module>"]


def test_refusals_are_read_from_what_a_cell_wrote_to_stderr():
    stderr = "a warning\n" + "".join(f"{guard.REFUSED}{why}\n" for why in
                                      ("sys._getframe", "gc.get_objects", "sys._getframe"))
    assert guard.refusals(stderr) == ["sys._getframe", "gc.get_objects"]
    assert guard.refusals("nothing refused here") == []
