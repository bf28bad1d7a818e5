"""The library's settings read from the environment and the machine."""

from __future__ import annotations

import pytest

from helpers import settings


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


def test_cpu_flags_are_read_from_the_machine():
    flags = settings.cpu_flags()
    assert isinstance(flags, frozenset) and all(isinstance(flag, str) and flag for flag in flags)
