"""Shared fixtures: the offline data source and a data folder with every corpus verified."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import data, settings

REPO = settings.REPO_ROOT


def _source() -> Path | None:
    configured = settings.data_source()
    candidate = configured or REPO.parent / "shared" / "data"
    return candidate if (candidate / "aclImdb_v1.tar.gz").is_file() else None


@pytest.fixture(scope="session")
def source() -> Path:
    """The offline copy of the data (KIT_DATA_SOURCE, else ../shared/data)."""
    found = _source()
    if found is None:
        pytest.skip("no offline data source: set KIT_DATA_SOURCE or put shared/ beside the repo")
    return found


@pytest.fixture(scope="session")
def corpora(source: Path) -> Path:
    """The kit's data folder with every data set fetched and verified (done once per run)."""
    data.fetch(source=source, progress=False)
    return settings.data_dir()


@pytest.fixture
def empty_data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point KIT_DATA_DIR at a new empty folder for one test."""
    folder = tmp_path / "data"
    monkeypatch.setenv("KIT_DATA_DIR", str(folder))
    return folder
