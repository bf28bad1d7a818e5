"""Grading a class: serial vs ``--jobs 2`` vs ``--scheduler local:2``, and what a student costs.

A class of generated submissions (a third the solution's answers, a third untouched stubs, a
third with one catalogued mistake from ``tests/mistakes``) is graded, after ``kit grade
--prepare``, three ways on the same machine, each from scratch. Every way must give the same
grades (asserted). Printed: wall time and peak memory (this process and every process under
it, each page once: ``helpers.course.memory``) of each way, the ratios, CPU seconds and wall
seconds per student (from the records), and a projection for a bigger class. Each way runs
once, in the order given, after the prepare has warmed every cache: a scaling measurement of
one engine, not a race between peers, so its ratios are indicative rather than medians of
alternated repeats.

Run from the repository root (sandboxed grading needs bubblewrap)::

    PYTHONHASHSEED=0 python benchmarks/bench_grading.py --students 30 --notebooks 01 03

With ``--together``, the class of every notebook given is then graded in one run too (one
student, all notebooks, two jobs: K30's target of 60 s)::

    PYTHONHASHSEED=0 python benchmarks/bench_grading.py --students 1 --modes jobs2 --together \
        --notebooks 01 02 03 04 05 06 07 08 09

Summary lines start with ``grading`` and are ``key=value`` pairs (``kind`` says which), for scripts.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import nbformat
import pandas as pd

from helpers.course import config, memory
from helpers.course.classroom import classgrade, gradebook
from helpers.course.notebook import cells, release
from helpers.course.notebook.cells import exercise_id

MISTAKES_DIR = Path(__file__).resolve().parents[1] / "tests" / "mistakes"
#: The ways a class is graded, as ``classgrade.grade`` keyword arguments.
MODES = {"serial": {"jobs": 1}, "jobs2": {"jobs": 2}, "local2": {"scheduler": "local:2"}}
#: Columns that must agree between the ways (times and dates may not).
COMPARED = ["student", "notebook", "exercise", "status", "passed", "points", "error"]
SAMPLE_SECONDS = 0.2
ENVIRONMENT_NOTE = r" \[reference outputs written with:.*$"  # cut short in a long error


def verdicts(grades: pd.DataFrame) -> pd.DataFrame:
    """The columns that must agree, without the note naming the run's BLAS threads (a job
    pinned to one core runs one thread; the grade is the same)."""
    found = grades[COMPARED].copy()
    found["error"] = found["error"].str.replace(ENVIRONMENT_NOTE, "", regex=True)
    return found


def mistakes_for(exercises: list[str]) -> list[tuple[str, str]]:
    """``(exercise, wrong source)`` for every catalogued mistake of these exercises."""
    found = []
    for path in sorted(MISTAKES_DIR.glob("ex_*.py")):
        spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        if module.EXERCISE in exercises:
            found += [(module.EXERCISE, source) for source in module.MISTAKES.values()]
    return found


def submission(solution: nbformat.NotebookNode, kind: int, mistake: tuple[str, str] | None
               ) -> nbformat.NotebookNode:
    """A student's notebook: the release with the solution's answers (kind 0), untouched (1),
    or the answers with one catalogued mistake (2)."""
    released = release.release_notebook(solution)
    if kind == 1:
        return released
    answers = {exercise_id(c): c.source for c in solution.cells if exercise_id(c)}
    if kind == 2 and mistake is not None:
        answers[mistake[0]] = mistake[1]
    for cell in released.cells:
        if exercise_id(cell) in answers:
            cell.source = answers[exercise_id(cell)]
    return released


def generate_class(folder: Path, students: int, solutions: list[Path]) -> None:
    """Write ``students`` folders of submissions for each solution notebook."""
    for path in solutions:
        solution = nbformat.read(path, as_version=4)
        mistakes = mistakes_for([ex.id for ex in cells.exercises(solution)])
        for number in range(students):
            student = folder / f"student{number:03d}"
            student.mkdir(parents=True, exist_ok=True)
            mistake = mistakes[number // 3 % len(mistakes)] if mistakes else None
            nbformat.write(submission(solution, number % 3, mistake), student / path.name)


def grade_once(template: Path, work: Path, mode: str,
               notebook: str | None) -> tuple[pd.DataFrame, float, float]:
    """Grade a fresh copy of the class one way; return (grades, wall seconds, peak GB)."""
    folder = work / mode
    shutil.copytree(template, folder)
    with memory.PeakSampler(memory.tree(os.getpid()), interval=SAMPLE_SECONDS) as sampler:
        started = time.perf_counter()
        grades = classgrade.grade(folder, notebook=notebook, **MODES[mode]).table
        seconds = time.perf_counter() - started
    return grades, seconds, sampler.peak_bytes / 2**30


def measure(group: list[Path], args: argparse.Namespace) -> None:
    """Grade the class of ``group``'s notebooks every way, in one run each (one notebook, or all
    of them at once, as ``kit grade`` grades a class), and print the summary lines."""
    notebook = group[0].stem[:2] if len(group) == 1 else None
    label = group[0].stem if len(group) == 1 else "all"
    with tempfile.TemporaryDirectory(prefix="bench-grading-") as tmp:
        template = Path(tmp) / "class"
        generate_class(template, args.students, group)
        results = {mode: grade_once(template, Path(tmp), mode, notebook) for mode in args.modes}
        first = verdicts(results[args.modes[0]][0])
        for mode, (grades, _, _) in results.items():  # the same grades every way
            pd.testing.assert_frame_equal(verdicts(grades), first, obj=f"grades ({mode})")
        records = gradebook.read_records(Path(tmp) / args.modes[0])
        cpu = pd.Series([r.cpu_seconds for r in records], dtype=float)
        wall = pd.Series([r.seconds for r in records], dtype=float)
        memory = pd.Series([r.peak_memory_mb for r in records], dtype=float)
        for mode, (_, seconds, peak) in results.items():
            print(f"grading notebook={label} kind=mode students={args.students} mode={mode} "
                  f"wall_s={seconds:.1f} peak_gb={peak:.2f}", flush=True)
        base = results[args.modes[0]][1]
        for mode, (_, seconds, _) in results.items():
            print(f"grading notebook={label} kind=ratio ratio={args.modes[0]}/{mode} "
                  f"value={base / seconds:.2f}")
        print(f"grading notebook={label} kind=per_student cpu_s_median={cpu.median():.1f} "
              f"cpu_s_max={cpu.max():.1f} wall_s_median={wall.median():.1f} wall_s_max={wall.max():.1f} "
              f"task_peak_mb_max={memory.max():.0f}")
        fastest = min(seconds for _, seconds, _ in results.values())
        print(f"grading notebook={label} kind=projection students={args.project_students} "
              f"hours_on_this_machine={fastest / args.students * args.project_students / 3600:.2f}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=30)
    parser.add_argument("--notebooks", nargs="+", default=["01", "03"])
    parser.add_argument("--modes", nargs="+", choices=list(MODES), default=list(MODES))
    parser.add_argument("--project-students", type=int, default=300)
    parser.add_argument("--together", action="store_true",
                        help="then grade every notebook given in one run (label notebook=all)")
    args = parser.parse_args(argv)
    config.apply_reference_env()
    solutions = config.notebooks_in(config.SOLUTIONS_DIR, args.notebooks)
    classgrade.prepare(notebooks=[p.stem for p in solutions])
    groups = [[path] for path in solutions] + ([solutions] if args.together and len(solutions) > 1 else [])
    for group in groups:
        measure(group, args)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
