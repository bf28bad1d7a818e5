"""The kit's Jupyter kernel: ipykernel, with the kit imported before the notebook's folder.

It also installs, once IPython's shell exists, the one-line display of unfinished exercises
(``helpers.exercises``; importing ``helpers`` installs nothing), and the
folding of what a cell shows after a "predict first" question (``reveal``), and the record of
what the lab ran, which ``kit check`` compares with the saved file (``unsaved``).

IPython puts the notebook's folder on ``sys.path``, so a student's own ``helpers.py`` (or
``helpers/``) beside their notebooks would be imported instead of the kit, and every
``from helpers... import`` would fail. ``kit lab`` and Binder's ``start`` put this kernel
first on ``JUPYTER_PATH`` under the usual name (``python3``); it starts with ``python -P``
(the working folder is not on the path), imports the kit, which the import system then
keeps, and the first cell the student runs says which file of theirs has the kit's name.
The working folder then goes last on the path: their other modules beside the notebook
import as usual, and none hides an installed library.
"""

from __future__ import annotations

import sys
from pathlib import Path

import helpers
from helpers import exercises
from helpers.course.startup import skipped_while

#: The kit's own package folder.
KIT_PACKAGE = Path(helpers.__file__).resolve().parent
#: Where ``kit lab`` and ``start`` find this kernel's spec (``kernels/python3/kernel.json``).
KERNEL_DATA_DIR = Path(__file__).parent / "jupyter_data"


def shadowing(folder: Path) -> list[Path]:
    """The files in ``folder`` named like the kit's package that are not the kit.

    Parameters
    ----------
    folder : Path
        A notebook's folder (the kernel's working folder).

    Returns
    -------
    list of Path
        ``helpers.py`` and ``helpers/`` there, if they exist and are not the kit itself.
    """
    named = [Path(folder) / "helpers.py", Path(folder) / "helpers"]
    return [path for path in named if path.exists() and path.resolve() != KIT_PACKAGE]


def shadowing_notice(path: Path) -> str:
    """What the student reads about one file of theirs with the kit's name."""
    return (f"kit: your {path} has the name of the kit's library: `import helpers` gives the "
            f"kit's, not yours. Rename yours (e.g. my_{path.name}) and import it by that name.")


def warn_on_first_cell(shell) -> None:
    """Have ``shell`` print ``shadowing_notice`` for each such file under the first cell run."""
    def first(info=None) -> None:
        shell.events.unregister("pre_run_cell", first)
        for path in shadowing(Path.cwd()):
            print(shadowing_notice(path), file=sys.stderr)

    shell.events.register("pre_run_cell", first)


def _lab_helpers(shell, kernel) -> None:
    """Install the lab's helpers: the folding of predictions (``reveal``), the record of what
    the lab ran (``unsaved``) and the notebook a missing name's hint reads."""
    with skipped_while():  # they read notebooks: nbformat, then jsonschema (helpers.course.startup)
        from helpers.course.student.reveal import fold_revealing_cells  # IPython's: not for `kit check`
        from helpers.course.student.unsaved import lab_notebook, record_lab_runs

    fold_revealing_cells(shell, kernel)
    record_lab_runs(shell, kernel)
    exercises.lab_notebook = lab_notebook()


def main() -> None:
    """Start the kernel (``python -P -m helpers.course.student.kernel -f CONNECTION_FILE``)."""
    from ipykernel.kernelapp import IPKernelApp

    app = IPKernelApp.instance()
    app.initialize(sys.argv[1:])
    sys.path.append("")  # -P left it out (IPython too, under -P)
    warn_on_first_cell(app.shell)
    try:
        _lab_helpers(app.shell, app.kernel)
    except Exception as error:  # a library the student changed: the kernel still starts, and says so
        print(f"kit: the lab's helpers are off ({type(error).__name__}: {error}); `kit info` says "
              "what changed in the kit's library.", file=sys.stderr)
    exercises.show_unfinished_briefly()
    app.start()


if __name__ == "__main__":
    main()
