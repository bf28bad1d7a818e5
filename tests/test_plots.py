"""The notebooks' plots are legible (issue K29): legends off the data, bands of a probability
within [0, 1], units in words.

Notebooks 01 and 03 (whose plots the issue named) run in a real kernel, as the student's do,
with every figure kept open instead of shown; then the kernel reports each figure's texts,
where its legend and its data are drawn, and the range of its shaded bands.
"""

from __future__ import annotations

import json
import re

import nbformat
import pytest
from nbclient import NotebookClient

from helpers.course import config
from helpers.course.notebook import runner
from helpers.course.notebook.cells import without_hidden

pytestmark = [pytest.mark.kernel, pytest.mark.slow]

NOTEBOOKS = ("01", "03")
KEEP_FIGURES = ("import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\n"
                "plt.show = lambda *args, **kwargs: None  # keep every figure open for the probe")
# Each figure's texts, its legend's box, its bars' and error bars' boxes (display units) and the
# y-range of its shaded bands (fill_between), printed as one JSON line.
PROBE = """
import json
from matplotlib.collections import LineCollection, PolyCollection
from matplotlib.patches import Rectangle
found = []
for number in plt.get_fignums():
    figure = plt.figure(number)
    figure.canvas.draw()
    renderer = figure.canvas.get_renderer()
    for ax in figure.axes:
        legend = ax.get_legend()
        texts = [ax.get_title(), ax.get_xlabel(), ax.get_ylabel()]
        texts += [t.get_text() for t in ax.get_xticklabels() + ax.get_yticklabels()]
        texts += [t.get_text() for t in legend.get_texts()] if legend else []
        bars = [p.get_window_extent(renderer).bounds for p in ax.patches
                if isinstance(p, Rectangle) and p.get_height() and p.get_width()]
        bars += [c.get_window_extent(renderer).bounds for c in ax.collections
                 if isinstance(c, LineCollection)]
        bands = [[float(v.min()), float(v.max())] for c in ax.collections if isinstance(c, PolyCollection)
                 for v in [c.get_paths()[0].vertices[:, 1]] if len(c.get_paths())]
        found.append({"figure": number, "title": ax.get_title(), "ylabel": ax.get_ylabel(),
                      "texts": texts, "data": bars, "bands": bands,
                      "legend": legend.get_window_extent(renderer).bounds if legend else None})
print(json.dumps(found))
"""
#: Units in words: not "1 points", not a ratio called "rate" on an axis of differences.
UNWORDED = re.compile(r"\b1 points\b|: rate\b")


def _overlap(a: list[float], b: list[float]) -> bool:
    """Whether two (x, y, width, height) boxes share more than a pixel's edge."""
    apart_x = a[0] >= b[0] + b[2] - 1 or b[0] >= a[0] + a[2] - 1
    return not apart_x and a[1] < b[1] + b[3] - 1 and b[1] < a[1] + a[3] - 1


@pytest.fixture(scope="module")
def figures(corpora) -> list[dict]:
    """Every axes of every figure 01 and 03 draw, as the probe reports them."""
    found = []
    for path in config.notebooks_in(config.SOLUTIONS_DIR, list(NOTEBOOKS)):
        nb = without_hidden(nbformat.read(path, as_version=4))
        nb.cells = [nbformat.v4.new_code_cell(KEEP_FIGURES), *nb.cells, nbformat.v4.new_code_cell(PROBE)]
        NotebookClient(nb, kernel_manager_class=runner.KitKernelManager, kernel_name="python3",
                       timeout=config.CELL_TIMEOUT,
                       resources={"metadata": {"path": str(path.parent)}}).execute()
        printed = "".join(output.get("text", "") for output in nb.cells[-1].outputs)
        found += [{"notebook": path.name, **axes} for axes in json.loads(printed)]
    return found


def test_the_probe_sees_the_plots_of_both_notebooks(figures):
    assert {axes["notebook"][:2] for axes in figures} == set(NOTEBOOKS)
    assert any(axes["data"] and axes["legend"] for axes in figures), "bars with a legend: 01's variants"
    assert any(axes["bands"] for axes in figures), "a shaded band: 03's convergence in R"


def test_no_legend_covers_a_bar_or_an_error_bar(figures):
    for axes in figures:
        if axes["legend"]:
            covered = [box for box in axes["data"] if _overlap(axes["legend"], box)]
            assert not covered, (axes["notebook"], axes["title"], covered[:3])


def test_a_band_of_p_values_or_shares_stays_within_0_and_1(figures):
    """The shaded bands drawn with fill_between (03's convergence in R; a span drawn with
    axhspan is a rectangle, not read here)."""
    for axes in figures:
        if "%" not in axes["ylabel"]:
            for low, high in axes["bands"]:
                assert 0 <= low <= high <= 1, (axes["notebook"], axes["title"], low, high)


def test_units_are_in_words(figures):
    for axes in figures:
        bad = [text for text in axes["texts"] if UNWORDED.search(text)]
        assert not bad, (axes["notebook"], axes["title"], bad)
