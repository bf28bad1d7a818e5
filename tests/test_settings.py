"""The library's settings read from the environment and the machine."""

from __future__ import annotations

import contextlib
import platform
import subprocess
import sys

import pytest

from helpers import settings
from helpers.errors import InputError, KitError


@pytest.mark.parametrize(("flags", "chosen", "expected"), [
    ({"avx2", "fma", "avx512f"}, None, {"OPENBLAS_CORETYPE": "Haswell"}),
    ({"avx2", "fma"}, None, {"OPENBLAS_CORETYPE": "Haswell"}),
    ({"sse2", "avx"}, None, {}),  # cannot run the reference kernels: OpenBLAS chooses
    (set(), None, {}),  # not Linux, or unknown
    ({"avx2", "fma", "avx512f"}, "Sandybridge", {}),  # kernels chosen by hand are kept
])
def test_the_reference_blas_kernels_are_used_where_the_cpu_runs_them(monkeypatch, flags, chosen, expected):
    monkeypatch.setattr(settings, "cpu_flags", lambda: frozenset(flags))
    if chosen:
        monkeypatch.setenv("OPENBLAS_CORETYPE", chosen)
    else:
        monkeypatch.delenv("OPENBLAS_CORETYPE", raising=False)
    assert settings.reference_blas() == expected


def test_cpu_flags_are_read_from_the_first_flags_line(tmp_path):
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\nflags\t\t: fpu sse2 avx fma\n\nprocessor\t: 1\nflags\t\t: fpu\n")
    assert settings.cpu_flags(cpuinfo) == {"fpu", "sse2", "avx", "fma"}
    assert settings.cpu_flags(tmp_path / "absent") == frozenset()
    cpuinfo.write_text("processor\t: 0\nFeatures\t: fp asimd\n")  # an ARM machine's: no flags line
    assert settings.cpu_flags(cpuinfo) == frozenset()


@pytest.mark.skipif(platform.machine() != "x86_64" or not settings.CPUINFO.is_file(),
                    reason="x86-64 Linux only")
def test_cpu_flags_are_read_from_this_machine():
    assert "sse2" in settings.cpu_flags()  # every x86-64 CPU has it


def test_the_profile_is_quick_unless_chosen_and_its_old_name_still_works_with_a_warning(monkeypatch):
    monkeypatch.delenv("KIT_PROFILE", raising=False)
    assert settings.profile() == settings.DEFAULT_PROFILE == "quick"
    monkeypatch.setenv("KIT_PROFILE", "full")
    assert settings.profile() == "full"
    assert settings.profile("quick") == "quick"  # an argument wins
    monkeypatch.setenv("KIT_PROFILE", "reference")
    with pytest.warns(FutureWarning, match="KIT_PROFILE=quick"):
        assert settings.profile() == "quick"
    with pytest.raises(InputError, match="Unknown profile .fast."):
        settings.profile("fast")


def test_the_significance_level_is_the_course_file_s(tmp_path):
    assert settings.alpha() == 0.05  # course/course.toml's [evaluation] alpha
    course = tmp_path / "course.toml"
    course.write_text("[course]\nname = \"x\"\n\n[evaluation]\nalpha = 0.01\n", encoding="utf-8")
    assert settings.alpha(course) == 0.01
    course.write_text("[evaluation]\nalpha = 0.1  # read again at every call\n", encoding="utf-8")
    assert settings.alpha(course) == 0.1


def test_the_course_file_has_one_reader_that_says_what_the_file_holds_for_its_caller(tmp_path):
    from helpers.course import course_file
    from helpers.course.notebook import student_copy

    course = tmp_path / "course.toml"
    with pytest.raises(KitError, match=r"course\.toml is missing: the answer \(restore it"):
        settings.read_course_file(course, holds="the answer")
    course.write_text("[course\n", encoding="utf-8")
    with pytest.raises(KitError, match=r"cannot be read as TOML \(.*\); the answer\.$"):
        settings.read_course_file(course, holds="the answer")
    course.write_text("[course]\nname = \"x\"\n", encoding="utf-8")
    assert settings.read_course_file(course) == course_file.read(course) == {"course": {"name": "x"}}
    # the tooling reads through it too, each saying what the file holds for it
    course.write_text("[course\n", encoding="utf-8")
    with pytest.raises(KitError, match=r"cannot be read as TOML \(.*\); its \[course\] student_repository "
                                       r"names the students' repository .*nothing was written\.$"):
        student_copy.students_repository(course_file=course)


@pytest.mark.parametrize(("text", "message"), [
    (None, r"course\.toml is missing: its \[evaluation\] alpha is the course's significance level"),
    ("[evaluation\nalpha = 0.05\n", "cannot be read as TOML"),
    ("[course]\nname = \"x\"\n", r"\[evaluation\] alpha is not set"),
    ("evaluation = 0.05\n", r"\[evaluation\] alpha is not set"),
    ("[evaluation]\nlevel = 0.05\n", r"\[evaluation\] alpha is not set"),
    ("[evaluation]\nalpha = 0.5\n", "is 0.5: it must be a number between 0 and 0.5"),
    ("[evaluation]\nalpha = 0\n", "is 0: it must be a number"),
    ("[evaluation]\nalpha = -0.05\n", "is -0.05: it must be a number"),
    ("[evaluation]\nalpha = 5\n", "is 5: it must be a number"),
    ("[evaluation]\nalpha = nan\n", "is nan: it must be a number"),
    ("[evaluation]\nalpha = \"0.05\"\n", "is '0.05': it must be a number"),
    ("[evaluation]\nalpha = true\n", "is True: it must be a number"),
])
def test_a_significance_level_missing_or_not_in_0_to_a_half_is_one_clear_error(tmp_path, text, message):
    course = tmp_path / "course.toml"
    if text is not None:
        course.write_text(text, encoding="utf-8")
    with pytest.raises(KitError, match=message):
        settings.alpha(course)


def test_the_kit_s_variables_are_read_here(monkeypatch):
    monkeypatch.delenv(settings.STRICT_CACHE_ENV, raising=False)
    monkeypatch.delenv(settings.LAB_SESSION_ENV, raising=False)
    monkeypatch.delenv(settings.HASH_SEED_ENV, raising=False)
    assert (settings.strict_caches(), settings.lab_session(), settings.hash_seed()) == (False, None, None)
    monkeypatch.setenv(settings.STRICT_CACHE_ENV, "1")
    monkeypatch.setenv(settings.LAB_SESSION_ENV, "/home/me/work/01_naive_bayes.ipynb")
    monkeypatch.setenv(settings.HASH_SEED_ENV, "0")
    assert (settings.strict_caches(), settings.lab_session(), settings.hash_seed()) == \
        (True, "/home/me/work/01_naive_bayes.ipynb", "0")


def test_the_environment_is_given_as_a_copy_and_set_for_the_processes_started_afterwards(monkeypatch):
    monkeypatch.setenv("KIT_TEST_A", "a")
    monkeypatch.delenv("KIT_TEST_B", raising=False)
    copy = settings.environment()
    copy["KIT_TEST_A"] = "changed"
    assert settings.environment(["KIT_TEST_A", "KIT_TEST_B"]) == {"KIT_TEST_A": "a"}
    settings.set_environment({"KIT_TEST_B": "b"}, unset=["KIT_TEST_A"])
    started = subprocess.run([sys.executable, "-c", "import os; print(os.environ.get('KIT_TEST_A'), "
                              "os.environ.get('KIT_TEST_B'))"], capture_output=True, text=True, check=True)
    assert started.stdout.split() == ["None", "b"]


def test_the_environment_kept_is_put_back_whatever_the_block_set_or_removed(monkeypatch):
    monkeypatch.setenv("KIT_TEST_A", "a")
    monkeypatch.delenv("KIT_TEST_B", raising=False)
    before = settings.environment()
    with pytest.raises(RuntimeError), settings.environment_kept():
        settings.set_environment({"KIT_TEST_B": "b", "KIT_TEST_A": "other"})
        settings.set_environment({}, unset=["KIT_TEST_A"])
        raise RuntimeError("the block fails: the environment is put back all the same")
    assert settings.environment() == before


@pytest.mark.parametrize("before", [None, "was set"])
def test_strict_caches_hold_until_the_last_block_running_at_once_ends(monkeypatch, before):
    if before is None:
        monkeypatch.delenv(settings.STRICT_CACHE_ENV, raising=False)
    else:
        monkeypatch.setenv(settings.STRICT_CACHE_ENV, before)
    with contextlib.ExitStack() as second:
        with settings.strict_caches_set():
            second.enter_context(settings.strict_caches_set())
            assert settings.environment([settings.STRICT_CACHE_ENV]) == {settings.STRICT_CACHE_ENV: "1"}
        assert settings.strict_caches()  # the first ended, not the second
    expected = {} if before is None else {settings.STRICT_CACHE_ENV: before}
    assert settings.environment([settings.STRICT_CACHE_ENV]) == expected
