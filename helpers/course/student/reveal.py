"""What a cell prints after a "predict first" question, folded until the student opens it.

The notebooks ask for a prediction before the cell that answers it (``**Prediction.`` answer
cells). Run All runs that cell too, so its table or plot would stand under the question before
the student has written a word. The release marks such cells (``kit.reveal``, the prediction's
answer id: ``helpers.course.notebook.release.mark_revealing_cells``); JupyterLab sends a cell's
metadata with its code, and the kit's kernel (``kernel.main``) then shows what the cell prints
and plots as one folded block, "Show the result", which the student opens once they have
predicted.

Only the lab's display changes: the code runs as before, errors and progress bars (stderr)
show as usual, and nbclient (grading, ``kit check``, nbval), which sends no cell metadata,
gets the plain outputs it compares.
"""

from __future__ import annotations

import base64
import html
import sys
from typing import Any

from IPython.display import publish_display_data
from IPython.utils.capture import capture_output

from helpers.course.notebook.cells import REVEAL_KEY

#: What the folded block says before it is opened.
SUMMARY = "Show the result (write your prediction {answer} above first)"


def revealed_answer(metadata: Any) -> str | None:
    """The prediction a cell's output answers.

    Parameters
    ----------
    metadata : Any
        The metadata JupyterLab sends with a cell's code (the cell's own, and its ``cellId``).

    Returns
    -------
    str or None
        ``kit.reveal`` (the prediction's answer id); None for any other cell, or metadata of
        another shape.
    """
    kit = metadata.get("kit") if isinstance(metadata, dict) else None
    answer = kit.get(REVEAL_KEY) if isinstance(kit, dict) else None
    return answer if isinstance(answer, str) else None


def folded(answer: str, text: str, shown: list[dict[str, Any]]) -> dict[str, str]:
    """The display bundle of a folded result.

    Parameters
    ----------
    answer : str
        The prediction's answer id (``1.b``), named in the summary line.
    text : str
        What the cell printed.
    shown : list of dict
        What it displayed, in order: each a MIME bundle (a table's ``text/html``, a plot's
        ``image/png``, base64 text or bytes, or ``text/plain``).

    Returns
    -------
    dict
        HTML ``<details>`` for the lab, and everything as ``text/plain`` for any other reader.
    """
    parts = [f"<pre>{html.escape(text)}</pre>"] if text else []
    plain = [text] if text else []
    for bundle in shown:
        if "image/png" in bundle:
            image = bundle["image/png"]
            image = base64.b64encode(image).decode() if isinstance(image, bytes) else str(image)
            parts.append(f'<img src="data:image/png;base64,{html.escape(image.strip(), quote=True)}"/>')
            plain.append("[a figure]")
        elif "text/html" in bundle:
            parts.append(str(bundle["text/html"]))
            plain.append(str(bundle.get("text/plain", "")))
        else:
            parts.append(f"<pre>{html.escape(str(bundle.get('text/plain', '')))}</pre>")
            plain.append(str(bundle.get("text/plain", "")))
    summary = html.escape(SUMMARY.format(answer=answer))
    return {"text/plain": "\n".join(plain),
            "text/html": f"<details><summary>{summary}</summary>{''.join(parts)}</details>"}


def fold_revealing_cells(shell: Any, kernel: Any) -> None:
    """Have ``shell`` fold what each cell marked ``kit.reveal`` prints and shows (see the module).

    The fold opens in ``pre_run_cell`` and closes in the ``post_run_cell`` of the same cell,
    so a cell that runs another (``%%capture``, ``run_cell``) does not end it early. Besides
    printed text and displays, the cell's own ``Out[]`` goes into the fold: IPython puts the
    shell's display hook back for that, so the fold replaces it for the cell's run.

    Parameters
    ----------
    shell : IPython InteractiveShell
        The kernel's shell, whose ``pre_run_cell`` and ``post_run_cell`` events are used.
    kernel : ipykernel Kernel
        Gives the request being run (``get_parent``), with the cell's metadata.
    """
    running: dict[str, Any] = {}

    def before(info: Any = None) -> None:
        if running:  # a cell run from within the folded one: it stays in the same fold
            return
        answer = revealed_answer((kernel.get_parent("shell") or {}).get("metadata"))
        if answer is not None:
            capture = capture_output(stdout=True, stderr=False, display=True)
            captured = capture.__enter__()
            running.update(info=info, capture=capture, captured=captured, answer=answer,
                           hook=shell.display_trap.hook)
            shell.display_trap.hook = sys.displayhook  # the capture's: the cell's Out[] too

    def after(result: Any = None) -> None:
        ended = result is None or result.info is running.get("info")  # None: an interrupted await
        if not running or not ended:
            return
        shell.display_trap.hook = running["hook"]
        running["capture"].__exit__(None, None, None)
        captured, answer = running["captured"], running["answer"]
        running.clear()
        shown = [dict(output.data) for output in captured.outputs]
        if captured.stdout or shown:
            publish_display_data(folded(answer, captured.stdout, shown))

    shell.events.register("pre_run_cell", before)
    shell.events.register("post_run_cell", after)
