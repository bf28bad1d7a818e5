"""An unfinished exercise in a notebook: one line instead of a traceback."""

from __future__ import annotations

import sys

import pytest

from helpers import exercises


def test_a_stub_error_names_its_exercise_and_nothing_else_does():
    assert exercises.unfinished(NotImplementedError("exercise 1.1")) == "1.1"
    assert exercises.unfinished(NotImplementedError("exercise 1.1 but more")) is None
    assert exercises.unfinished(NotImplementedError()) is None
    assert exercises.unfinished(ValueError("exercise 1.1")) is None
    assert exercises.not_done("4.2") == "NotImplementedError: exercise 4.2 not done yet"


def test_a_cell_s_defined_names_are_found():
    source = ("import numpy as np\nfrom a.b import c as d\nx, (y, z) = 1, (2, 3)\n"
              "def f():\n    inner = 1\nclass K: pass\nfor i in []: pass\nprint(w)")
    assert exercises.defined_names(source) == {"np", "d", "x", "y", "z", "f", "K", "i"}
    assert exercises.defined_names("total = sum(v for v in values)\nif x:\n    late = 1") == {"total", "late"}
    assert exercises.defined_names("def broken(:") == set()
    for unparsable in ("x = '\ud800'", "-" * 100_000 + "1", "a" + ".b" * 200_000):  # surrogate, too deep
        assert exercises.defined_names(unparsable) == set()


def test_a_name_error_on_a_name_a_stub_stopped_says_which_exercise():
    missing = NameError("name 'mine' is not defined", name="mine")
    assert exercises.missing_because(missing, {"mine": "4.1"}) == (
        "NameError: name 'mine' is not defined: the cell that defines it stopped on exercise 4.1, "
        "not done yet when it ran; run that cell again once it is done")
    assert exercises.missing_because(missing, {"other": "4.1"}) is None
    assert exercises.missing_because(KeyError("mine"), {"mine": "4.1"}) is None


def test_outside_a_notebook_nothing_is_installed():
    assert exercises.show_unfinished_briefly() is False


class FakeShell:
    """What the handler uses of IPython's shell: it registers, and shows a traceback."""

    def set_custom_exc(self, kinds, handler):
        self.kinds, self.handler = kinds, handler

    def showtraceback(self, exc_tuple, tb_offset=None, running_compiled_code=False):
        self.shown = exc_tuple[1]._render_traceback_()


def test_in_a_kernel_a_stub_error_is_one_line(monkeypatch):
    shell = FakeShell()
    monkeypatch.setattr(pytest.importorskip("IPython"), "get_ipython", lambda: shell)
    assert exercises.show_unfinished_briefly() is True
    assert NotImplementedError in shell.kinds and NameError in shell.kinds
    error = NotImplementedError("exercise 2.1")
    shell.handler(shell, type(error), error, None)
    assert shell.shown == ["NotImplementedError: exercise 2.1 not done yet"]


def test_in_a_kernel_a_kit_error_is_one_line_and_other_errors_keep_their_traceback(monkeypatch):
    from helpers.errors import InputError, KitError

    shell = FakeShell()
    monkeypatch.setattr(pytest.importorskip("IPython"), "get_ipython", lambda: shell)
    exercises.show_unfinished_briefly()
    assert KitError in shell.kinds and ValueError not in shell.kinds
    for error, shown in ((KitError("Write it as a string"), "KitError: Write it as a string"),
                         (InputError("alpha must be > 0"), "InputError: alpha must be > 0")):
        shell.handler(shell, type(error), error, None)
        assert shell.shown == [shown]


def test_an_error_in_the_handler_still_shows_the_error(monkeypatch):
    shell = FakeShell()
    monkeypatch.setattr(pytest.importorskip("IPython"), "get_ipython", lambda: shell)
    exercises.show_unfinished_briefly()

    def broken(*args):
        raise RuntimeError("a bug in the handler")

    monkeypatch.setattr(exercises, "_lines", broken)
    shell.showtraceback = lambda exc_tuple, **kwargs: setattr(shell, "shown", exc_tuple[1])
    error = NotImplementedError("exercise 2.1")
    shell.handler(shell, type(error), error, None)
    assert shell.shown is error and not hasattr(error, "_render_traceback_")


class RecordingShell(FakeShell):
    """A shell that keeps what it was asked to show: the one line, or the error itself."""

    def showtraceback(self, exc_tuple, tb_offset=None, running_compiled_code=False):
        error = exc_tuple[1]
        self.shown = error._render_traceback_() if hasattr(error, "_render_traceback_") else error


def _run_cell(folder, name: str, source: str):
    """Run ``source`` as a notebook cell would (a ``<module>`` frame whose lines linecache
    finds); return what it raised, with its traceback."""
    path = folder / name
    path.write_text(source)
    try:
        exec(compile(source, str(path), "exec"), {})
    except Exception as err:
        return err
    raise AssertionError(f"{name} raised nothing")


@pytest.fixture
def library(tmp_path, monkeypatch):
    """A stand-in for the kit's library, importable as ``kitlib``; the kernel's records fresh."""
    package = tmp_path / "kitlib"
    package.mkdir()
    (package / "__init__.py").write_text("")
    monkeypatch.setattr(exercises, "LIBRARY", package.resolve())
    monkeypatch.setattr(exercises, "_broken", {})
    monkeypatch.setattr(exercises, "_needs", {})
    monkeypatch.syspath_prepend(str(tmp_path))
    yield package
    for name in [name for name in sys.modules if name.split(".")[0] == "kitlib"]:
        del sys.modules[name]  # the next test's kitlib is another folder


def test_an_error_in_importing_the_library_names_its_file_and_line(library, tmp_path):
    (library / "text.py").write_text("def tokenized(x):\n    return x\nthis line is not Python\n")
    (library / "words.py").write_text("ok = 1\nstray_word\n")
    broken = _run_cell(tmp_path, "cell1.py", "import kitlib.text\n")
    assert exercises.library_error(broken, broken.__traceback__) == (
        "SyntaxError in the kit's library (kitlib/text.py, line 3: invalid syntax)")
    stray = _run_cell(tmp_path, "cell2.py", "import kitlib.words\n")
    assert exercises.library_error(stray, stray.__traceback__) == (
        "NameError in the kit's library (kitlib/words.py, line 2: name 'stray_word' is not defined)")
    mine = _run_cell(tmp_path, "cell3.py", "import kitlib\nkitlib.nothing_here\n")
    assert exercises.library_error(mine, mine.__traceback__) is None
    theirs = _run_cell(tmp_path, "cell4.py", "exec('x x')\n")
    assert exercises.library_error(theirs, theirs.__traceback__) is None


def test_a_name_a_cell_stopped_on_the_library_says_which_error_stopped_it(library, tmp_path, monkeypatch):
    """The kernel's side of a stray line in helpers/text.py: not a bare `NameError: name
    'X_train' is not defined` in every later cell, but the library's error that caused it."""
    shell = RecordingShell()
    monkeypatch.setattr(pytest.importorskip("IPython"), "get_ipython", lambda: shell)
    exercises.show_unfinished_briefly()
    assert SyntaxError in shell.kinds and ImportError in shell.kinds
    (library / "text.py").write_text("this line is not Python\n")
    cause = "SyntaxError in the kit's library (kitlib/text.py, line 1: invalid syntax)"
    for name, source in (("setup.py", "import numpy as np\nfrom kitlib.text import tokenized\nreviews = 1\n"),
                         ("fold.py", "X_train = reviews + 1\n"), ("check.py", "print(X_train)\n")):
        error = _run_cell(tmp_path, name, source)
        shell.handler(shell, type(error), error, error.__traceback__)
    assert shell.shown == [f"NameError: name 'X_train' is not defined: the cell that defines it stopped "
                           f"on {cause}"]
    error = _run_cell(tmp_path, "setup_again.py", "from kitlib.text import tokenized\n")
    shell.handler(shell, type(error), error, error.__traceback__)
    assert shell.shown is error  # the library's own error keeps its traceback, which names the file
    assert exercises.missing_from_library(NameError("name 'other' is not defined", name="other"),
                                          exercises._broken) is None
