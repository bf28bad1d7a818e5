"""A pytest plugin that sets up nbval the way the kit's reference outputs need.

Loaded with ``-p helpers.nbval_hooks`` (see ``pyproject.toml``; ``kit grade`` passes it too).

- ``PYTHONHASHSEED=0`` for every kernel nbval starts (kernels inherit this process's
  environment), so set iteration order and gensim's hashing match the reference run.
- stderr and HTML are not compared: a new library warning or a pandas styling change must
  not fail a checked cell; the plain-text output is what is checked.
"""

from __future__ import annotations

import os

import pytest

NOT_COMPARED = ("stderr", "text/html")


def pytest_configure(config: pytest.Config) -> None:
    os.environ["PYTHONHASHSEED"] = "0"


def pytest_collectstart(collector: pytest.Collector) -> None:
    if hasattr(collector, "skip_compare"):  # nbval's notebook collector
        collector.skip_compare = (*collector.skip_compare, *NOT_COMPARED)
