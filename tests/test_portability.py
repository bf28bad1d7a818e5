"""The reference outputs hold under BLAS kernels other than the ones that wrote them, and the kit
runs where POSIX-only modules are missing.

The notebooks that train or use Doc2Vec go through BLAS (gensim's ``sdot``/``saxpy`` from
scipy's OpenBLAS), whose kernels differ from CPU to CPU. ``solutions/tolerances.csv`` holds every
checked output's spread under six kernel settings (``tolerances.SETTINGS``, measured by
``python -m helpers.course.notebook.tolerances``), and a checked number may differ from its
reference by its cell's declared tolerance. CI checks this for real, for every notebook at
once: ``.ci/run`` runs the whole suite under one of those settings that is not the references'
(``CI_KERNELS``), in the fresh data folder of a clean clone, so the kit's Doc2Vec model, every
sample model, every vector and every number from them is computed again under it, and every
solution notebook (nbval), the mistake catalogue and every grading run must hold the reference
outputs within their measured tolerances. The first test here fails a CI run that is not so set.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from helpers import settings
from helpers.course.notebook.tolerances import SETTINGS, Setting

#: The setting CI runs under (``.ci/run``): Sandybridge's kernels (AVX without FMA) moved the most
#: in solutions/tolerances.csv, where one SVM-Doc2Vec prediction flips; one thread.
CI_KERNELS = Setting("Sandybridge", 1)
#: How OpenBLAS names the kernels a core type chooses, where the names differ.
KERNEL_NAMES = {"Prescott": "Katmai"}
#: Asks a new Python, as a kernel would start, which OpenBLAS kernels and threads numpy's and
#: scipy's libraries (gensim's BLAS) run with.
BLAS_IN_USE = ("import json, numpy, scipy.linalg\nfrom threadpoolctl import threadpool_info\n"
               "libs = [lib for lib in threadpool_info() if lib['internal_api'] == 'openblas']\n"
               "print(json.dumps(sorted({(lib['architecture'], lib['num_threads']) for lib in libs})))")
#: Imports what a student's commands import, with the POSIX-only modules hidden (as on
#: native Windows), and asks for ``kit --help``.
WITHOUT_POSIX = ("import sys\nsys.modules.update(fcntl=None, pwd=None)\n"
                 "import helpers.data, helpers.storage\nfrom helpers.cli import main\nmain(['--help'])\n")


def _blas_in_a_new_process() -> list[tuple[str, int]]:
    shown = subprocess.run([sys.executable, "-c", BLAS_IN_USE], capture_output=True, text=True,
                           timeout=120, check=True)
    return [tuple(pair) for pair in json.loads(shown.stdout)]


def test_ci_checks_every_notebook_under_other_kernels_than_the_references_in_a_fresh_data_folder(
        cached_before_the_run):
    chosen = settings.environment(["OPENBLAS_CORETYPE"]).get("OPENBLAS_CORETYPE")
    if chosen in (None, settings.REFERENCE_BLAS_CORE):
        pytest.skip("this run checks the notebooks under the reference kernels only; CI (.ci/run) sets "
                    f"OPENBLAS_CORETYPE={CI_KERNELS.core} OPENBLAS_NUM_THREADS={CI_KERNELS.threads} in a "
                    "fresh data folder")
    [(kernels, threads)] = _blas_in_a_new_process()
    assert kernels == KERNEL_NAMES.get(chosen, chosen), f"OPENBLAS_CORETYPE={chosen}: OpenBLAS runs {kernels}"
    assert (chosen, threads) in SETTINGS, \
        f"{chosen} with {threads} threads is not a setting solutions/tolerances.csv was measured under"
    assert cached_before_the_run == [], (
        "the data folder held BLAS-dependent caches when the run began, so they were not computed "
        f"under {chosen}: {cached_before_the_run[:5]}")


def test_the_kit_imports_and_answers_help_without_posix_only_modules():
    shown = subprocess.run([sys.executable, "-c", WITHOUT_POSIX], capture_output=True, text=True,
                           timeout=120)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith("usage: kit")


def test_grading_elsewhere_than_linux_says_so_in_one_line(tmp_path, monkeypatch, capsys):
    from helpers.cli import main

    monkeypatch.setattr(sys, "platform", "win32")
    assert main(["grade", str(tmp_path)]) == 1
    said = capsys.readouterr().err
    assert said.startswith("kit: `kit grade` needs Linux") and said.count("\n") == 1
