"""Predict first: what answers a prediction stays folded in the lab until the student opens it.

The release marks the cells after each ``**Prediction.`` answer (``mark_revealing_cells``); the
kit's kernel, started as ``kit lab`` starts it, folds what such a cell prints and plots when the
request carries that cell's metadata, as JupyterLab's does; a request without it (nbclient's:
grading, ``kit check``, nbval) gets the plain outputs. tests/test_lab_browser.py sees the fold
in a real browser.
"""

from __future__ import annotations

import queue
import re

import nbformat
import pytest
from lab_kernel import KERNEL_START_SECONDS, lab_kernel, send_as_the_lab

from helpers.course.config import SOLUTIONS_DIR, notebooks_in
from helpers.course.notebook import cells, release
from helpers.course.student import reveal

#: A figure as a question might quote one: digits with a decimal point (0.781, 81.0).
DECIMAL = re.compile(r"(?<![\w.])\d+\.\d+(?![\w.])")
PRINTS_AND_PLOTS = ("import sys\nimport matplotlib.pyplot as plt\nprint('accuracy 0.517')\n"
                    "print('progress', file=sys.stderr)\nplt.plot([1, 2])\nplt.show()")


def test_the_fold_holds_the_printed_text_the_tables_and_the_plots_in_order_and_names_the_prediction():
    shown = [{"text/html": "<table>t</table>", "text/plain": "t"}, {"image/png": "iVBORw0KGgo=\n"},
             {"image/png": b"\x89PNG"}, {"text/plain": "Out: 1 < 2"}]
    bundle = reveal.folded("1.b", "a < b\n", shown)
    assert bundle["text/plain"] == "a < b\n\nt\n[a figure]\n[a figure]\nOut: 1 < 2"
    html = bundle["text/html"]
    assert html.startswith("<details><summary>") and html.endswith("</details>")
    assert "prediction 1.b" in html and "<pre>a &lt; b\n</pre><table>t</table>" in html
    images = '<img src="data:image/png;base64,iVBORw0KGgo="/><img src="data:image/png;base64,iVBORw=="/>'
    assert images in html
    assert html.index("<table>") < html.index("<img") < html.index("Out: 1 &lt; 2")


def test_only_a_cell_marked_with_an_answer_id_is_folded():
    assert reveal.revealed_answer({"kit": {"reveal": "1.b"}, "cellId": "x"}) == "1.b"
    for metadata in (None, {}, {"kit": "1.b"}, {"kit": {"reveal": 2}}, {"kit": {"checks": "1.1"}}, []):
        assert reveal.revealed_answer(metadata) is None


def test_the_release_marks_the_cells_after_each_prediction_and_never_an_exercise_or_its_checks():
    for path in notebooks_in(SOLUTIONS_DIR):
        solution = nbformat.read(path, as_version=4)
        released = release.release_notebook(solution, path.name)
        marked = {}
        for cell in released.cells:
            answer = cells.kit_metadata(cell).get(cells.REVEAL_KEY)
            if answer is not None:
                marked.setdefault(answer, []).append(cell)
                graded_at_once = cells.exercise_id(cell) or cells.checked_exercise(cell)
                assert cell.cell_type == "code" and not (graded_at_once or cells.is_own_results_figure(cell))
        predictions = [cell.metadata["kit"]["answer"] for cell in solution.cells
                       if cells.answer_id(cell) and cell.source.lstrip().startswith(cells.PREDICTION_MARK)]
        assert sorted(marked) == sorted(predictions), path.name
        graded = release.release_notebook(solution, path.name, hidden=True)
        assert not any(cells.REVEAL_KEY in cells.kit_metadata(cell) for cell in graded.cells)
    first = release.release_notebook(nbformat.read(notebooks_in(SOLUTIONS_DIR, ["01"])[0], as_version=4))
    order = [cell.id for cell in first.cells]
    variants = [cell.id for cell in first.cells if cells.kit_metadata(cell).get(cells.REVEAL_KEY) == "1.b"]
    assert variants and all(order.index(cell) > order.index("01-answer-b") for cell in variants)
    assert all(order.index(cell) < order.index("01-answer-c") for cell in variants)


def _shown(cell: nbformat.NotebookNode) -> str:
    """What a solution's cell shows before the student writes: a question's text above its
    answer, or a code cell's stored output."""
    if cell.cell_type == "markdown":
        return cell.source.split("=== BEGIN ANSWER ===")[0]
    return "".join(output.get("text", "") or output.get("data", {}).get("text/plain", "")
                   for output in cell.get("outputs", []))


def test_no_prediction_quotes_a_figure_first_printed_by_the_cells_it_asks_about():
    """A figure in a question may be given (shown above it, or in an earlier notebook, or a
    paper's figure stated before it), never the answer: a number with a decimal point that the
    revealed cells print must have been shown before the question."""
    given: set[str] = set()
    for path in notebooks_in(SOLUTIONS_DIR):
        solution = nbformat.read(path, as_version=4)
        revealed: dict[str, list[str]] = {}
        for cell in release.release_notebook(solution, path.name).cells:
            answer = cells.kit_metadata(cell).get(cells.REVEAL_KEY)
            if answer is not None:
                revealed.setdefault(answer, []).append(cell.id)
        by_id = {cell.id: cell for cell in solution.cells}
        for cell in solution.cells:
            asked = cells.answer_id(cell)
            if asked in revealed:
                printed = set().union(*(DECIMAL.findall(_shown(by_id[i])) for i in revealed[asked]))
                quoted = set(DECIMAL.findall(_shown(cell))) & printed
                assert quoted <= given, (path.name, asked, sorted(quoted - given))
            given |= set(DECIMAL.findall(_shown(cell)))


def _outputs(client, code: str, metadata: dict) -> list[dict]:
    """The outputs (stream, display_data, error) of one execute request sent with ``metadata``."""
    sent = send_as_the_lab(client, code, metadata)
    found = []
    while True:
        try:
            reply = client.get_iopub_msg(timeout=KERNEL_START_SECONDS)
        except queue.Empty:
            raise AssertionError(f"no end of the request: {found}") from None
        if reply["parent_header"].get("msg_id") != sent:
            continue
        kind = reply["msg_type"]
        if kind == "status" and reply["content"]["execution_state"] == "idle":
            return found
        if kind in ("stream", "display_data", "execute_result", "error"):
            found.append({"type": kind, **reply["content"]})


@pytest.mark.kernel
def test_the_lab_s_kernel_folds_a_marked_cell_and_leaves_every_other_request_as_it_was(tmp_path, monkeypatch):
    with lab_kernel(tmp_path, monkeypatch) as client:
        folded = _outputs(client, PRINTS_AND_PLOTS, {"cellId": "a", "kit": {"reveal": "1.a"}})
        plain = _outputs(client, PRINTS_AND_PLOTS, {"cellId": "b"})
        failing = _outputs(client, "print('before')\n1 / 0", {"cellId": "c", "kit": {"reveal": "1.a"}})
        valued = _outputs(client, "x = 41\nx + 1", {"cellId": "d", "kit": {"reveal": "1.a"}})
        nested = _outputs(client, "%%capture inner\nprint('kept in inner')",
                          {"cellId": "e", "kit": {"reveal": "1.a"}})
        after = _outputs(client, "print('seen')\nx", {"cellId": "f"})

    shown = [output for output in folded if output["type"] == "display_data"]
    assert [output["name"] for output in folded if output["type"] == "stream"] == ["stderr"], folded
    [bundle] = shown
    assert bundle["data"]["text/plain"] == "accuracy 0.517\n\n[a figure]"
    html = bundle["data"]["text/html"]
    assert html.startswith("<details>") and "prediction 1.a" in html and "accuracy 0.517" in html
    assert 'src="data:image/png;base64,' in html and "image/png" not in bundle["data"]

    assert any(o["type"] == "stream" and o["text"] == "accuracy 0.517\n" for o in plain), plain
    assert any(o["type"] == "display_data" and "image/png" in o["data"] for o in plain), plain
    assert not any("<details>" in o.get("data", {}).get("text/html", "") for o in plain)

    assert [o["type"] for o in failing] == ["error", "display_data"], failing  # the error at once
    assert failing[0]["ename"] == "ZeroDivisionError" and failing[1]["data"]["text/plain"] == "before\n"

    [value] = valued  # the cell's Out[] goes into the fold too
    assert value["type"] == "display_data" and value["data"]["text/plain"] == "42"
    assert nested == []  # %%capture ran a cell within the folded one: nothing shown, the fold closed
    assert [(o["type"], o.get("text") or o["data"]["text/plain"]) for o in after] == \
        [("stream", "seen\n"), ("execute_result", "41")], "a later cell shows as usual"
