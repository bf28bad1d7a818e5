"""The library's settings read from the environment and the machine."""

from __future__ import annotations

import platform

import pytest

from helpers import settings
from helpers.errors import InputError


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
