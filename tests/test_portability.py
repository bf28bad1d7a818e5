"""The reference outputs hold under other BLAS kernels, not only on the CPU that wrote them.

The notebooks that train or use Doc2Vec go through BLAS (gensim's ``sdot``/``saxpy`` from
scipy's OpenBLAS), whose kernels differ from CPU to CPU. Here the solutions of those
notebooks are graded as a student's submission under another kernel setting, one thread and
a fresh data folder (every model and cache recomputed): each must pass its checks within the
declared, measured tolerances (``solutions/tolerances.csv``) and get full marks.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd

from helpers.course.config import SOLUTIONS_DIR, notebooks_in
from helpers.course.tolerances import Setting

#: The notebooks whose checked numbers depend on floating-point kernels (Doc2Vec).
KERNEL_DEPENDENT = ["04", "05", "06", "07", "08"]
OTHER_KERNELS = Setting("Prescott", 1)


def test_kernel_dependent_solutions_get_full_marks_under_other_kernels(tmp_path: Path, source: Path):
    env = OTHER_KERNELS.environ(tmp_path / "data")
    subprocess.run([sys.executable, "-m", "helpers.cli", "fetch", "--source", str(source)],
                   env=env, check=True, capture_output=True)
    student = tmp_path / "class" / "solutions"
    student.mkdir(parents=True)
    for path in notebooks_in(SOLUTIONS_DIR, KERNEL_DEPENDENT):
        shutil.copy(path, student)
    assert len(list(student.iterdir())) == len(KERNEL_DEPENDENT)
    # One notebook at a time: each reuses the models and caches the previous ones built.
    command = [sys.executable, "-m", "helpers.cli", "grade", str(student.parent), "--jobs", "1"]
    result = subprocess.run(command, env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-3000:]
    grades = pd.read_csv(student.parent / "grades.csv", dtype=str, keep_default_na=False)
    graded = grades[grades.notebook.str[:2].isin(KERNEL_DEPENDENT)]
    assert set(graded.notebook.str[:2]) == set(KERNEL_DEPENDENT)
    failed = graded[graded.passed != "True"]
    assert failed.empty, failed.to_string()
