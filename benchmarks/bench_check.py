"""`kit check` alone: the progress table from saved verdicts, against the target of 2 seconds.

A workspace is seeded from the release (``kit work``'s copies) and every copy with exercises
gets saved verdicts, as a check of it would leave them (``check.remember``, every exercise
passed). Then ``kit check`` alone, which runs nothing, and ``kit --help``, the floor of any
command (Python, the kit's import, the argument parser), run as the student runs them, a new
process each, in alternated rounds. Both must exit 0 and ``kit check`` must print its table
with every notebook "saved, nothing changed since" (asserted): the time is that of the answer
the student reads.

Run from the repository root::

    PYTHONHASHSEED=0 python benchmarks/bench_check.py --repeats 7

The summary line starts with ``RESULT``: ``check_s`` (median), ``floor_s`` (``kit --help``),
``added_s`` (what the table adds to the floor) and ``target_s``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat
from cost import MIN_REPEATS, summary_line
from measure import alternate

from helpers.course import config
from helpers.course.engine.verdict import Status, Verdict
from helpers.course.notebook.cells import exercises
from helpers.course.student import check, progress, workspace

#: What the student README promises for `kit check` alone, in seconds.
TARGET_SECONDS = 2.0


def _saved_workspace(work: Path) -> int:
    """Seed ``work`` and save passing verdicts for each copy with exercises; how many."""
    workspace.seed(work)
    saved = 0
    for copy in sorted(work.glob("[0-9][0-9]_*.ipynb")):
        reference = config.NOTEBOOKS_DIR / copy.name
        if not check.has_exercises(reference):
            continue
        released = nbformat.read(reference, as_version=4)
        verdicts = [Verdict(ex.id, Status.PASSED) for ex in exercises(released)]
        check.remember(copy, check.check_key(copy, reference, config.CELL_TIMEOUT), verdicts,
                       progress.fingerprint(copy, reference))
        saved += 1
    return saved


def _kit(env: dict[str, str], *args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "helpers.cli", *args], env=env, capture_output=True,
                          text=True)
    if done.returncode != 0:
        raise SystemExit(f"kit {' '.join(args)} failed ({done.returncode}): {done.stderr[-500:]}")
    return done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=MIN_REPEATS)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-check-") as folder:
        work = Path(folder) / "work"
        os.environ["KIT_WORK_DIR"] = str(work)  # check_key and the child processes see the same workspace
        saved = _saved_workspace(work)
        env = {**os.environ, "PYTHONHASHSEED": "0"}
        contenders = {"kit check": lambda: _kit(env, "check"), "kit --help": lambda: _kit(env, "--help")}
        timings = alternate(contenders, repeats=args.repeats)
    table = timings["kit check"].output
    unchanged = table.count(progress.SAVED.split(", ")[1])  # "saved <when>, nothing changed since"
    assert unchanged == saved, f"{unchanged} of {saved} notebooks read as unchanged:\n{table}"
    took, floor = timings["kit check"], timings["kit --help"]
    print(table)
    print(summary_line({"name": "kit_check_alone", "notebooks": saved, "check_s": f"{took.median:.3g}",
                        "check_iqr": f"{took.iqr:.2g}", "floor_s": f"{floor.median:.3g}",
                        "added_s": f"{took.median - floor.median:.3g}", "target_s": TARGET_SECONDS,
                        "within_target": "yes" if took.median < TARGET_SECONDS else "no",
                        "repeats": args.repeats}))


if __name__ == "__main__":
    main()
