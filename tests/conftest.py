"""Shared fixtures: the offline data source and a data folder with every corpus verified."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import data, settings

REPO = settings.REPO_ROOT


def _source() -> Path | None:
    configured = settings.data_source()
    candidate = configured or REPO.parent / "shared" / "data"
    if (candidate / "aclImdb_v1.tar.gz").is_file():
        return candidate
    # A user who fetched from the internet has no offline copy, but a verified data folder
    # holds the same archives in the same layout, so it serves as the source.
    if all(data.is_verified(name) for name in data.DATASETS):
        return settings.data_dir()
    return None


@pytest.fixture(scope="session")
def source() -> Path:
    """The data to fetch from: KIT_DATA_SOURCE, else ../shared/data, else the verified data/."""
    found = _source()
    if found is None:
        pytest.skip("no data: run `kit fetch` (or set KIT_DATA_SOURCE to an offline copy)")
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
