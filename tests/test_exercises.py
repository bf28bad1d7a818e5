"""An unfinished exercise in a notebook: one line instead of a traceback."""

from __future__ import annotations

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

    def showtraceback(self, exc_tuple, tb_offset=None):
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
    shell.showtraceback = lambda exc_tuple, tb_offset=None: setattr(shell, "shown", exc_tuple[1])
    error = NotImplementedError("exercise 2.1")
    shell.handler(shell, type(error), error, None)
    assert shell.shown is error and not hasattr(error, "_render_traceback_")
