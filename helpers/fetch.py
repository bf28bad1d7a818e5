"""Fetch the kit's data sets: download or copy, check sha256, extract, atomically written.

Data sets and where they live inside the data folder (``helpers.settings.data_dir()``)::

    nltk_data/corpora/<name>.zip   + nltk_data/corpora/<name>/   (NLTK corpora)
    aclImdb_v1.tar.gz              + aclImdb/                    (Large Movie Review Dataset)

A local source folder (``KIT_DATA_SOURCE`` or ``kit fetch --source DIR``) has the same
layout for the archives and replaces the network; everything after obtaining the archive
(checksum, atomic rename, extraction) is the same code either way.

An extracted folder holds a stamp file with its archive's sha256 and a manifest of every file
it extracted (path, size, modification time, sha256). ``require`` gives the loaders a folder
whose files still match the manifest (sizes and times, checked once per process; a file whose
time moved is hashed), and ``stamp`` the caches its checksum. ``kit fetch`` extracts a changed
folder again from its verified archive; ``kit fetch --verify`` hashes every file.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tarfile
import tempfile
import urllib.error
import urllib.request
import zipfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tqdm import tqdm

from helpers import settings
from helpers.errors import KitError
from helpers.files import CHUNK, file_lock, set_aside, sha256sum
from helpers.log import LOGGER

STAMP = ".kit-verified"
#: The extracted files, one per line: path (relative, "/"), size, mtime in ns, sha256.
MANIFEST = ".kit-manifest.tsv"
#: Held while fetching, so two fetches into one data folder do not clean up each other's work.
FETCH_LOCK = ".kit-fetch.lock"
#: Changed files named in an error, at most.
NAMED_FILES = 5
IMDB_URL = "https://ai.stanford.edu/~amaas/data/sentiment/aclImdb_v1.tar.gz"
#: What an offline source folder holds: the files ``kit fetch`` downloads, under these names.
SOURCE_LAYOUT = "aclImdb_v1.tar.gz and nltk_data/corpora/<corpus>.zip (the files `kit fetch` downloads)"
DIGEST_CHARS = 12
#: tarfile's "data" filter where this Python has it; ``_checked`` refuses the same members anyway.
TAR_FILTER: dict[str, Any] = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}


@dataclass(frozen=True)
class Dataset:
    """One fetchable data set: its archive, accepted checksums and extracted folder."""

    name: str
    archive: str
    sha256: tuple[str, ...]
    folder: str
    url: str | None = None  # None: fetched with nltk.download

    @property
    def is_nltk(self) -> bool:
        return self.url is None


def _nltk(name: str, sha256: str) -> Dataset:
    return Dataset(name, f"nltk_data/corpora/{name}.zip", (sha256,), f"nltk_data/corpora/{name}")


DATASETS: dict[str, Dataset] = {
    ds.name: ds
    for ds in [
        _nltk("movie_reviews", "a41211ae685019137410268134db6a1a14428c89b671eb83056151a878539008"),
        _nltk("sentence_polarity", "6e1ed4405b65c7eabf1d199a7f7c437091ac21da0ea7467b410a74062574566b"),
        _nltk("product_reviews_1", "627bfb0bb7c87586246d99b4402c3d7e4fb77ac14559d8695c283bd6850615ac"),
        _nltk("product_reviews_2", "272b08fe130882e5867aa7ecc69a65616099183c4ccc10374a62c271801b0bc1"),
        _nltk("subjectivity", "741f3371e1a4375051b874fd82fd55857b90975473c91c19a3101cbe17fc4d8c"),
        _nltk("stopwords", "15c94179887425ca1bedc265608cab9f27d650211f709bb929e320990a4b01d1"),
        _nltk("opinion_lexicon", "7a5da68d53016c5d1fca38f7dd81844cff73466371f90968d1ef15c85b873193"),
        Dataset(
            "imdb",
            "aclImdb_v1.tar.gz",
            (
                # The official Stanford archive.
                "c40f74a18d3b61f90feba1e17730e0d38e8b97c05fde7008942e91923d1658fe",
                # The offline copy repacked without the *.feat files (../shared/data).
                "31145550535602130453e6e3f1629483ccc3bcd60cc0ee38cd0aea48012203ec",
            ),
            "aclImdb",
            IMDB_URL,
        ),
    ]
}


# --------------------------------------------------------------------------- checksums


def is_verified(name: str, data_dir: Path | None = None) -> bool:
    """Return True if data set ``name`` is intact: its archive and its extracted files.

    The archive must match a known sha256, and the extracted files their manifest (sizes and
    times; a file whose time moved is hashed).

    Parameters
    ----------
    name : str
        A key of ``DATASETS``.
    data_dir : Path, optional
        The data folder (default: ``settings.data_dir()``).
    """
    root = data_dir or settings.data_dir()
    return _archive_verified(DATASETS[name], root) and not changed_files(root / DATASETS[name].folder)


def _archive_verified(ds: Dataset, root: Path) -> bool:
    """The archive matches a known sha256 and the folder was extracted from it."""
    archive, stamp = root / ds.archive, root / ds.folder / STAMP
    if not (archive.is_file() and stamp.is_file()):
        return False
    return stamp.read_text().strip() == sha256sum(archive) in ds.sha256


# --------------------------------------------------------------------------- fetching


PRESENT = "present (verified)"


def fetch(
    names: Iterable[str] | None = None,
    source: Path | str | None = None,
    data_dir: Path | None = None,
    progress: bool = True,
    verify: bool = False,
) -> dict[str, str]:
    """Fetch, verify and extract data sets into the data folder.

    Already-verified data sets are left alone. An archive in the data folder that fails its
    checksum is moved aside (never deleted, never used) and fetched again; an extracted folder
    whose files changed (edited, deleted or added) is extracted again from its archive.
    Temporary files and folders left by an interrupted fetch are removed.

    Parameters
    ----------
    names : iterable of str, optional
        Which data sets (keys of ``DATASETS``); default all.
    source : path, optional
        A local folder holding the same files (``SOURCE_LAYOUT``) to copy from instead of the network
        (default: ``KIT_DATA_SOURCE``).
    data_dir : Path, optional
        Where to put the data (default: ``settings.data_dir()``).
    progress : bool
        Show tqdm progress bars.
    verify : bool
        Hash every extracted file against the manifest (default: sizes and times only).

    Returns
    -------
    dict
        ``{name: what happened}``: ``"present (verified)"``; ``"fetched from <origin>, <size>,
        verified"``, the origin being the local copy's folder or the official URL; or
        ``"extracted again from its verified archive (<size>)"``, after the changed files
        were named on stderr.

    Raises
    ------
    KitError
        Unknown name, source folder lacking a file, download failure, checksum mismatch of a
        freshly fetched file, or a failed write (nothing half-written is left behind).
    """
    chosen = list(names) if names else list(DATASETS)
    from helpers.validation import check_choice  # here: `kit --help` loads no numpy or pandas

    for name in chosen:
        check_choice(name, "data set", sorted(DATASETS))
    root = data_dir or settings.data_dir()
    src = Path(source).expanduser().resolve() if source else settings.data_source()
    status = {}
    try:
        with _fetch_lock(root):
            for name in chosen:
                status[name] = _fetch_checked(DATASETS[name], root, src, progress, verify)
    except OSError as err:
        raise KitError(
            f"Could not write into {root}: {err}. Free some disk space or point "
            "KIT_DATA_DIR at a writable folder, then run `kit fetch` again."
        ) from err
    return status


@contextlib.contextmanager
def _fetch_lock(root: Path) -> Iterator[None]:
    root.mkdir(parents=True, exist_ok=True)
    with file_lock(root / FETCH_LOCK):
        yield  # unlocked only in a read-only data folder: checking it needs none; a repair fails clearly


def _fetch_checked(ds: Dataset, root: Path, source: Path | None, progress: bool, verify: bool) -> str:
    """Fetch one data set unless it is there and intact; say what happened."""
    _remove_leftovers(ds, root)
    if _archive_verified(ds, root):
        changed = changed_files(root / ds.folder, full=verify)
        if not changed:
            return PRESENT
        LOGGER.info(f"{ds.name}: {describe_changes(changed)}; extracting it again.")
    obtained = _fetch_one(ds, root, source, progress)
    size = (root / ds.archive).stat().st_size / 2**20
    return (f"fetched from {origin(ds, source)}, {size:,.1f} MiB, verified"
            if obtained else f"extracted again from its verified archive ({size:,.1f} MiB)")


def _remove_leftovers(ds: Dataset, root: Path) -> None:
    """Remove what an interrupted fetch of ``ds`` left: a partial download, a half extraction."""
    archive, folder = root / ds.archive, root / ds.folder
    leftovers = [*archive.parent.glob(f".{archive.name}.*.part"), *folder.parent.glob(f".{folder.name}.*")]
    for leftover in leftovers:
        if leftover.is_dir() and not leftover.is_symlink():
            shutil.rmtree(leftover, ignore_errors=True)
        else:
            leftover.unlink(missing_ok=True)


def origin(ds: Dataset, source: Path | None) -> str:
    """Where a data set's archive comes from: the local copy's folder, the URL, or NLTK."""
    if source is not None:
        return f"local copy {source}"
    return ds.url or f"nltk.download({ds.name!r})"


def _fetch_one(ds: Dataset, root: Path, source: Path | None, progress: bool) -> bool:
    """Obtain (unless a verified copy is there) and extract one data set; True if obtained."""
    archive = root / ds.archive
    archive.parent.mkdir(parents=True, exist_ok=True)
    if archive.exists() and sha256sum(archive) not in ds.sha256:
        set_aside(archive, "failed its checksum", then="fetched again")
    obtained = not archive.exists()
    if obtained:
        _obtain(ds, archive, source, progress)
    _extract(ds, archive, root / ds.folder, progress)
    return obtained


def _obtain(ds: Dataset, archive: Path, source: Path | None, progress: bool) -> None:
    """Copy or download ``ds``'s archive to a temporary file, verify it, then rename it."""
    fd, tmp_name = tempfile.mkstemp(prefix=f".{archive.name}.", suffix=".part", dir=archive.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        if source is not None:
            _copy_from_source(ds, source, tmp, progress)
        elif ds.is_nltk:
            _nltk_download(ds, tmp)
        else:
            assert ds.url is not None  # not is_nltk
            _download(ds.url, tmp, progress)
        digest = sha256sum(tmp)
        if digest not in ds.sha256:
            aside = archive.with_name(f"{archive.name}.corrupt-{digest[:DIGEST_CHARS]}")
            tmp.replace(aside)
            raise KitError(
                f"{ds.name}: the file from {origin(ds, source)} has sha256 {digest}, expected one of "
                f"{list(ds.sha256)}. It was kept as {aside} and not used. Replace the source "
                "copy (or retry the download) and run `kit fetch` again."
            )
        tmp.replace(archive)
    finally:
        tmp.unlink(missing_ok=True)


def _copy_from_source(ds: Dataset, source: Path, dest: Path, progress: bool) -> None:
    origin = source / ds.archive
    if not origin.is_file():
        raise KitError(
            f"The data source {source} has no {ds.archive}. A source folder must hold "
            f"{SOURCE_LAYOUT}; fix KIT_DATA_SOURCE / --source, or unset it to download."
        )
    with open(origin, "rb") as fin, open(dest, "wb") as fout, _bytes_bar(
        origin.stat().st_size, ds.archive, progress
    ) as bar:
        for chunk in iter(lambda: fin.read(CHUNK), b""):
            fout.write(chunk)
            bar.update(len(chunk))


def _download(url: str, dest: Path, progress: bool) -> None:
    try:
        response = urllib.request.urlopen(url, timeout=60)
    except (urllib.error.URLError, TimeoutError) as err:
        raise KitError(
            f"Could not download {url}: {err}. Check the network, or fetch from a local "
            "copy with `kit fetch --source DIR` (or KIT_DATA_SOURCE=DIR)."
        ) from err
    total = int(response.headers.get("Content-Length") or 0) or None
    with response, open(dest, "wb") as fout, _bytes_bar(total, Path(url).name, progress) as bar:
        for chunk in iter(lambda: _received(response, url), b""):
            fout.write(chunk)
            bar.update(len(chunk))


def _received(response, url: str) -> bytes:
    """The next chunk of a download; a dropped connection is a download error, not a disk one."""
    try:
        return response.read(CHUNK)
    except OSError as err:  # ConnectionResetError, a socket timeout
        raise KitError(f"The download of {url} broke off ({err}). Run `kit fetch` again, or fetch from a "
                       "local copy with `kit fetch --source DIR`.") from err


def _nltk_download(ds: Dataset, dest: Path) -> None:
    """Download one NLTK package with ``nltk.download`` and move its zip to ``dest``."""
    import nltk

    with tempfile.TemporaryDirectory(dir=dest.parent) as tmpdir:
        ok = nltk.download(ds.name, download_dir=tmpdir, quiet=True, raise_on_error=False)
        zipped = Path(tmpdir) / "corpora" / f"{ds.name}.zip"
        if not ok or not zipped.is_file():
            raise KitError(
                f"nltk.download({ds.name!r}) failed. Check the network, or fetch from a local "
                "copy with `kit fetch --source DIR` (or KIT_DATA_SOURCE=DIR)."
            )
        shutil.copyfile(zipped, dest)


def _bytes_bar(total: int | None, desc: str, progress: bool) -> tqdm:
    return tqdm(total=total, desc=desc, unit="B", unit_scale=True, disable=not progress)


def _checked(member: tarfile.TarInfo) -> tarfile.TarInfo:
    """Refuse what tarfile's "data" filter refuses, for Pythons without it (before 3.11.4)."""
    name = Path(member.name)
    if name.is_absolute() or ".." in name.parts or not (member.isfile() or member.isdir()):
        raise tarfile.TarError(f"unsafe archive member {member.name!r}")
    return member


def _extract(ds: Dataset, archive: Path, folder: Path, progress: bool) -> None:
    """Extract into a temporary folder beside ``folder``, stamp it, then swap it in."""
    digest = sha256sum(archive)
    tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
    try:
        if archive.suffix == ".zip":
            with zipfile.ZipFile(archive) as zf:
                members = zf.namelist()
                for member in tqdm(members, desc=f"extract {ds.name}", disable=not progress):
                    zf.extract(member, tmp)
        else:
            with tarfile.open(archive) as tf:
                for member in tqdm(tf, desc=f"extract {ds.name}", unit=" files",
                                   disable=not progress):
                    tf.extract(_checked(member), tmp, **TAR_FILTER)
        extracted = tmp / folder.name
        _write_manifest(extracted)
        (extracted / STAMP).write_text(digest + "\n")
        if folder.exists():
            # A stale or partial extraction of ours; the archive is the source of truth.
            shutil.rmtree(folder)
        extracted.rename(folder)
    except (zipfile.BadZipFile, tarfile.TarError, EOFError) as err:
        raise KitError(
            f"{archive} passed its checksum but could not be extracted ({err}); delete it and "
            "run `kit fetch` again."
        ) from err
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# --------------------------------------------------------------------------- verified folders

#: Folders whose files matched their manifest in this process (folder, stamp).
_intact: set[tuple[Path, str]] = set()


def _scan(folder: Path) -> dict[str, os.stat_result]:
    """Every file under ``folder`` (but the kit's stamp and manifest) by relative path, with its stat."""
    found = {}
    pending = [("", str(folder))]
    while pending:
        prefix, path = pending.pop()
        with os.scandir(path) as entries:
            for entry in entries:
                name = prefix + entry.name
                if entry.is_dir(follow_symlinks=False):
                    pending.append((name + "/", entry.path))
                elif name not in (STAMP, MANIFEST):
                    found[name] = entry.stat(follow_symlinks=False)
    return dict(sorted(found.items()))


def _write_manifest(folder: Path) -> None:
    lines = [f"{name}\t{info.st_size}\t{info.st_mtime_ns}\t{sha256sum(folder / name)}\n"
             for name, info in _scan(folder).items()]
    (folder / MANIFEST).write_text("".join(lines), encoding="utf-8")


def _read_manifest(folder: Path) -> dict[str, tuple[int, int, str]] | None:
    try:
        text = (folder / MANIFEST).read_text(encoding="utf-8")
        entries = {}
        for line in text.splitlines():
            name, size, mtime, digest = line.split("\t")
            entries[name] = (int(size), int(mtime), digest)
    except (OSError, ValueError):
        return None
    return entries


def changed_files(folder: Path, full: bool = False) -> dict[str, str]:
    """Files of an extracted folder that no longer match its manifest, with what changed.

    Parameters
    ----------
    folder : Path
        An extracted data set's folder.
    full : bool
        Hash every file. Otherwise only a file whose size or modification time differs from
        the manifest is hashed (a copy of the folder may have new times but the same bytes).

    Returns
    -------
    dict
        ``{relative path: "changed" | "missing" | "added"}``; ``{"(manifest)": "missing"}``
        when there is no readable manifest. Empty: the folder is as extracted.
    """
    manifest = _read_manifest(folder)
    if manifest is None:
        return {MANIFEST: "missing"}
    found = _scan(folder)
    changes = {name: "missing" for name in manifest if name not in found}
    changes.update({name: "added" for name in found if name not in manifest})
    for name, info in found.items():
        if name in manifest and _differs(folder / name, info, *manifest[name], full=full):
            changes[name] = "changed"
    return dict(sorted(changes.items()))


def _differs(path: Path, info: os.stat_result, size: int, mtime: int, digest: str, full: bool) -> bool:
    if info.st_size != size:
        return True
    return (full or info.st_mtime_ns != mtime) and sha256sum(path) != digest


def describe_changes(changes: dict[str, str]) -> str:
    """One phrase naming what changed in an extracted folder (the first few files)."""
    if MANIFEST in changes:
        return "its folder has no manifest of its files (extracted by an older kit)"
    named = ", ".join(f"{name} {what}" for name, what in list(changes.items())[:NAMED_FILES])
    more = f" and {len(changes) - NAMED_FILES} more" if len(changes) > NAMED_FILES else ""
    return f"{len(changes)} file(s) differ from what was extracted ({named}{more})"


def require(name: str) -> Path:
    """Return the extracted folder of data set ``name``, checked against its manifest.

    The check (sizes and modification times) runs once per process and folder.

    Raises
    ------
    KitError
        The data set is not fetched, or its files changed since: either way, ``kit fetch``.
    """
    folder = settings.data_dir() / DATASETS[name].folder
    if not (folder / STAMP).is_file():
        raise KitError(
            f"The {name} data is not in {settings.data_dir()}. Run `kit fetch` (offline: "
            f"`kit fetch --source DIR`, DIR holding {SOURCE_LAYOUT})."
        )
    seen = (folder.resolve(), (folder / STAMP).read_text().strip())
    if seen not in _intact:
        changes = changed_files(folder)
        if changes:
            raise KitError(f"The {name} data in {folder} changed since it was fetched: "
                           f"{describe_changes(changes)}. Run `kit fetch` to extract it again.")
        _intact.add(seen)
    return folder


def fetched_stamp(name: str, data_dir: Path | None = None) -> str | None:
    """The stamp of data set ``name`` (its verified archive's sha256), None when not fetched.

    One small file read, no scan: what a key that must be cheap (``kit check``'s reuse of
    saved verdicts) depends on. It changes when the data set is fetched again; the extracted
    files themselves are checked by ``require`` when a notebook reads them.
    """
    path = (data_dir or settings.data_dir()) / DATASETS[name].folder / STAMP
    return path.read_text().strip() if path.is_file() else None


def stamp(name: str) -> str:
    """The sha256 of data set ``name``'s verified archive (for keying caches derived from it).

    Only the stamp is read: whoever reads the extracted files calls ``require``, which checks them.
    """
    found = fetched_stamp(name)
    if found is None:
        folder = require(name)  # raises the error that says to fetch it
        found = (folder / STAMP).read_text().strip()  # unless it was fetched meanwhile
    return found
