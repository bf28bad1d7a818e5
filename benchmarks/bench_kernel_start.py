"""What every graded notebook pays before its first cell: the kit's kernel against ipykernel's.

Every run of a notebook by the kit (``kit grade``, ``kit check``, ``kit bakeoff``, ``kit lab``
and the tests' hundreds of runs) starts the kit's kernel (``helpers.course.student.kernel``:
ipykernel plus the lab's helpers). Its floor is ipykernel started alone. Both are started by
jupyter_client as nbval starts them, with the environment the kit gives its kernels
(``config.reference_environ``), until ready, then asked ``6 * 7``: both must answer ``42``
(asserted), so the time is that of a kernel that runs code. Rounds alternate (ABBA...).

Then the grader's own floor: a two-cell notebook graded without a sandbox
(``nbval_run.run_notebook``: pytest, the kit's plugin, nbval, the kit's kernel), which must pass
both cells (asserted).

Run from the repository root::

    PYTHONHASHSEED=0 python benchmarks/bench_kernel_start.py --repeats 7

Summary lines start with ``RESULT``: ``kit_s`` and ``floor_s`` (medians), ``ratio`` (kit /
floor) and ``target`` (the ratio the kit's kernel must stay under); ``grader_s`` for the run.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import nbformat
from cost import MIN_REPEATS, summary_line
from jupyter_client import KernelManager
from jupyter_client.kernelspec import KernelSpec
from measure import alternate

from helpers.course import config
from helpers.course.engine import nbval_run
from helpers.course.engine.verdict import Ending

#: The kit's kernel may take this many times ipykernel's start (its helpers: IPython's hooks, the
#: lab's record of runs). Before 2026-12-02 it took 3.9 times (6.1 against 1.6 s): its helpers
#: imported nbformat, which imported a module that builds 35 parsers (``helpers.course.startup``).
TARGET_RATIO = 1.5
ASKED, ANSWER = "6 * 7", "42"
START_SECONDS = 120  # bounds a hang only


def started_and_asked(argv: list[str]) -> str:
    """Start a kernel from ``argv`` until ready, ask it ``ASKED``, stop it; what it answered."""
    manager = KernelManager()
    manager._kernel_spec = KernelSpec(argv=argv, display_name="bench", language="python",
                                      env=config.reference_environ())
    manager.start_kernel()
    client = manager.client()
    try:
        client.start_channels()
        client.wait_for_ready(timeout=START_SECONDS)
        reply = client.execute_interactive(ASKED, timeout=START_SECONDS, output_hook=lambda _: None,
                                           user_expressions={"answer": ASKED})
        return reply["content"]["user_expressions"]["answer"]["data"]["text/plain"]
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


def graded(path: Path) -> list[Ending]:
    """How each cell of ``path`` ended when the grader ran it without a sandbox."""
    run = nbval_run.run_notebook(path, START_SECONDS)
    return [result.ending for _, result in sorted(run.results.items())]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=MIN_REPEATS)
    args = parser.parse_args()
    kernels = {"kit kernel": config.kit_kernel_argv(),
               "ipykernel": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]}
    timings = alternate({name: (lambda argv=argv: started_and_asked(argv)) for name, argv in kernels.items()},
                        repeats=args.repeats)
    for name, timing in timings.items():
        assert timing.output == ANSWER, f"{name} answered {timing.output!r} to {ASKED}"
    kit, floor = timings["kit kernel"], timings["ipykernel"]
    ratio = kit.median / floor.median
    print(summary_line({"name": "kernel_start", "kit_s": f"{kit.median:.3g}", "kit_iqr": f"{kit.iqr:.2g}",
                        "floor_s": f"{floor.median:.3g}", "floor_iqr": f"{floor.iqr:.2g}",
                        "ratio": f"{ratio:.3g}", "target": TARGET_RATIO,
                        "within_target": "yes" if ratio < TARGET_RATIO else "no", "repeats": args.repeats}))
    with tempfile.TemporaryDirectory(prefix="bench-kernel-") as folder:
        path = Path(folder) / "two_cells.ipynb"
        nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 6 * 7"),
                                                       nbformat.v4.new_code_cell("print(x)")]), path)
        run = alternate({"grader": lambda: graded(path)}, repeats=args.repeats)["grader"]
    assert run.output == [Ending.PASSED, Ending.PASSED], run.output
    print(summary_line({"name": "grader_two_cells", "grader_s": f"{run.median:.3g}",
                        "grader_iqr": f"{run.iqr:.2g}", "repeats": args.repeats}))


if __name__ == "__main__":
    main()
