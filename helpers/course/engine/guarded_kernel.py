"""The graded kernel: ipykernel with the grading guard (``guard``) installed before any cell.

``nbval_plugin --kit-guard`` starts it (``python -P -m helpers.course.engine.guarded_kernel``)
in place of nbval's kernel of the current Python: it reads the run's key
(``guard.read_key``), installs the audit hook, then starts ipykernel as the student's kernel
does (``student.kernel``): the notebook's folder last on the path, and the one-line display
of unfinished exercises once the shell exists.
"""

from __future__ import annotations

import sys

from helpers.course.engine import guard
from helpers.exercises import show_unfinished_briefly


def main() -> None:
    """Start the kernel with the guard installed (the run's key; refusals reported on the
    cells' stderr) before any cell runs."""
    from ipykernel.kernelapp import IPKernelApp

    app = IPKernelApp.instance()
    app.initialize(sys.argv[1:])
    guard.install(guard.read_key(), report=sys.stderr)  # the kernel's stream, before any cell
    sys.path.append("")  # -P left the working folder out: it comes last, after the kit and libraries
    show_unfinished_briefly()  # importing helpers came before the shell existed
    app.start()


if __name__ == "__main__":
    main()
