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

import html
from typing import Any

from IPython.display import publish_display_data
from IPython.utils.capture import capture_output

from helpers.course.notebook.cells import REVEAL_KEY

#: What the folded block says before it is opened.
SUMMARY = "Show the result (write your prediction {answer} above first)"


def revealed_answer(metadata: Any) -> str | None:
    """The prediction a cell's output answers (``kit.reveal`` in the metadata JupyterLab sends
    with its code), or None for any other cell or malformed metadata."""
    kit = metadata.get("kit") if isinstance(metadata, dict) else None
    answer = kit.get(REVEAL_KEY) if isinstance(kit, dict) else None
    return answer if isinstance(answer, str) else None


def folded(answer: str, text: str, images: list[str]) -> dict[str, str]:
    """The display bundle of a folded result: HTML ``<details>`` for the lab, and the printed
    text as ``text/plain`` for any other reader.

    Parameters
    ----------
    answer : str
        The prediction's answer id (``1.b``), named in the summary line.
    text : str
        What the cell printed.
    images : list of str
        The cell's plots, base64-encoded PNGs.
    """
    parts = [f"<pre>{html.escape(text)}</pre>"] if text else []
    parts += [f'<img src="data:image/png;base64,{image}"/>' for image in images]
    summary = html.escape(SUMMARY.format(answer=answer))
    return {"text/plain": text or f"[{len(images)} figure(s)]",
            "text/html": f"<details><summary>{summary}</summary>{''.join(parts)}</details>"}


def fold_revealing_cells(shell: Any, kernel: Any) -> None:
    """Have ``shell`` fold what each cell marked ``kit.reveal`` prints and plots (see the module).

    Parameters
    ----------
    shell : IPython InteractiveShell
        The kernel's shell, whose ``pre_run_cell`` and ``post_run_cell`` events are used.
    kernel : ipykernel Kernel
        Gives the request being run (``get_parent``), with the cell's metadata.
    """
    running: dict[str, Any] = {}

    def before(info: Any = None) -> None:
        answer = revealed_answer((kernel.get_parent("shell") or {}).get("metadata"))
        if answer is not None:
            capture = capture_output(stdout=True, stderr=False, display=True)
            running.update(capture=capture, captured=capture.__enter__(), answer=answer)

    def after(result: Any = None) -> None:
        if "capture" not in running:
            return
        running.pop("capture").__exit__(None, None, None)
        captured, answer = running.pop("captured"), running.pop("answer")
        shown = captured.outputs
        text = captured.stdout + "".join(output.data.get("text/plain", "") + "\n" for output in shown
                                         if "image/png" not in output.data)
        images = [output.data["image/png"] for output in shown if "image/png" in output.data]
        if text or images:
            publish_display_data(folded(answer, text, images))

    shell.events.register("pre_run_cell", before)
    shell.events.register("post_run_cell", after)
