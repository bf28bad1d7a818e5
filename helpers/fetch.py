"""Fetch the kit's data sets: download or copy, check sha256, extract, atomically written.

Data sets and where they live inside the data folder (``helpers.settings.data_dir()``)::

    nltk_data/corpora/<name>.zip   + nltk_data/corpora/<name>/   (NLTK corpora)
    aclImdb_v1.tar.gz              + aclImdb/                    (Large Movie Review Dataset)

A local source folder (``KIT_DATA_SOURCE`` or ``kit fetch --source DIR``) has the same
layout for the archives and replaces the network; everything after obtaining the archive
(checksum, atomic rename, extraction) is the same code either way. An extracted folder
holds a stamp file with its archive's sha256: ``require`` and ``stamp`` give the loaders
and caches a verified folder and its checksum.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tarfile
import tempfile
import urllib.error
import urllib.request
import zipfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from tqdm import tqdm

from helpers import settings
from helpers.errors import KitError

CHUNK = 1 << 20
STAMP = ".kit-verified"
IMDB_URL = "https://ai.stanford.edu/~amaas/data/sentiment/aclImdb_v1.tar.gz"
DIGEST_CHARS = 12
#: tarfile's "data" filter where this Python has it; ``_checked`` refuses the same members anyway.
TAR_FILTER = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}


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


def sha256sum(path: Path) -> str:
    """Return the hex sha256 digest of a file, read in 1 MiB chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


def is_verified(name: str, data_dir: Path | None = None) -> bool:
    """Return True if data set ``name`` is extracted and its archive matches a known sha256.

    Parameters
    ----------
    name : str
        A key of ``DATASETS``.
    data_dir : Path, optional
        The data folder (default: ``settings.data_dir()``).
    """
    ds = DATASETS[name]
    root = data_dir or settings.data_dir()
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
) -> dict[str, str]:
    """Fetch, verify and extract data sets into the data folder.

    Already-verified data sets are left alone. An archive in the data folder that fails its
    checksum is moved aside (never deleted, never used) and fetched again.

    Parameters
    ----------
    names : iterable of str, optional
        Which data sets (keys of ``DATASETS``); default all.
    source : path, optional
        A local folder laid out like ``../shared/data`` to copy from instead of the network
        (default: ``KIT_DATA_SOURCE``).
    data_dir : Path, optional
        Where to put the data (default: ``settings.data_dir()``).
    progress : bool
        Show tqdm progress bars.

    Returns
    -------
    dict
        ``{name: what happened}``: ``"present (verified)"``; ``"fetched from <origin>, <size>,
        verified"``, the origin being the local copy's folder or the official URL; or
        ``"extracted again from its verified archive (<size>)"``.

    Raises
    ------
    KitError
        Unknown name, source folder lacking a file, download failure, checksum mismatch of a
        freshly fetched file, or a failed write (nothing half-written is left behind).
    """
    chosen = list(names) if names else list(DATASETS)
    unknown = [n for n in chosen if n not in DATASETS]
    if unknown:
        raise KitError(f"Unknown data set(s) {unknown}; choose from {sorted(DATASETS)}.")
    root = data_dir or settings.data_dir()
    src = Path(source).expanduser().resolve() if source else settings.data_source()
    status = {}
    for name in chosen:
        if is_verified(name, root):
            status[name] = PRESENT
            continue
        try:
            obtained = _fetch_one(DATASETS[name], root, src, progress)
        except OSError as err:
            raise KitError(
                f"Could not write {name} into {root}: {err}. Free some disk space or point "
                "KIT_DATA_DIR at a writable folder, then run `kit fetch` again."
            ) from err
        size = (root / DATASETS[name].archive).stat().st_size / 2**20
        status[name] = (f"fetched from {origin(DATASETS[name], src)}, {size:,.1f} MiB, verified"
                        if obtained else f"extracted again from its verified archive ({size:,.1f} MiB)")
    return status


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
        _move_aside(archive)
    obtained = not archive.exists()
    if obtained:
        _obtain(ds, archive, source, progress)
    _extract(ds, archive, root / ds.folder, progress)
    return obtained


def _move_aside(path: Path) -> Path:
    """Rename a corrupt file to ``<name>.corrupt-<timestamp>`` so it is kept but never used."""
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S-%f")
    aside = path.with_name(f"{path.name}.corrupt-{stamp}")
    path.rename(aside)
    tqdm.write(f"{path.name} failed its checksum; moved aside to {aside.name}, fetching again.")
    return aside


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
            f"The data source {source} has no {ds.archive}. A source folder must be laid out "
            "like ../shared/data (nltk_data/corpora/<name>.zip and aclImdb_v1.tar.gz); fix "
            "KIT_DATA_SOURCE / --source, or unset it to download."
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
        for chunk in iter(lambda: response.read(CHUNK), b""):
            fout.write(chunk)
            bar.update(len(chunk))


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


def require(name: str) -> Path:
    """Return the extracted folder of data set ``name``, or raise a KitError saying to fetch it."""
    folder = settings.data_dir() / DATASETS[name].folder
    if not (folder / STAMP).is_file():
        raise KitError(
            f"The {name} data is not in {settings.data_dir()}. Run `kit fetch` (offline: "
            "`kit fetch --source DIR` with a copy laid out like ../shared/data)."
        )
    return folder


def stamp(name: str) -> str:
    """The sha256 of data set ``name``'s verified archive (for keying caches derived from it)."""
    return (require(name) / STAMP).read_text().strip()


def atomic_write(path: Path, write: Callable[[Path], None]) -> None:
    """Call ``write(tmp)`` on a temporary file beside ``path``, then rename it into place."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    os.close(fd)
    try:
        write(Path(tmp_name))
        os.chmod(tmp_name, 0o644)  # mkstemp makes files private; these are ordinary data files
        os.replace(tmp_name, path)
    finally:
        Path(tmp_name).unlink(missing_ok=True)


def verified_cache(path: Path) -> bool:
    """True if cache file ``path`` and its sha256 sidecar exist and agree.

    A file that fails its checksum is renamed ``*.corrupt`` (kept for a look, never read) and
    the caller rebuilds it.
    """
    sidecar = path.with_name(path.name + ".sha256")
    if not (path.is_file() and sidecar.is_file()):
        return False
    if sidecar.read_text().strip() == sha256sum(path):
        return True
    path.rename(path.with_name(path.name + ".corrupt"))
    tqdm.write(f"{path.name} failed its checksum; it was set aside and will be rebuilt.")
    return False


#: Set (to anything) when a cache that cannot be stored must be an error, not a warning.
STRICT_CACHE_ENV = "KIT_STRICT_CACHE"


def keep_cache(store: Callable[[Path, Callable[[Path], None]], None], path: Path,
               write: Callable[[Path], None]) -> bool:
    """Store a computed result as a cache with ``store`` (``atomic_write`` or ``store_verified``).

    A folder that cannot be written (read-only in ``kit grade``'s sandbox, a full disk) costs
    one line on stderr, not the result: returns False then. With ``STRICT_CACHE_ENV`` set
    (``kit grade --prepare``, which must leave every cache built) the error is raised.
    """
    try:
        store(path, write)
    except OSError as err:
        if os.environ.get(STRICT_CACHE_ENV):
            raise
        tqdm.write(f"{path.name} was computed but not kept as a cache ({err.strerror or err}).")
        return False
    return True


def store_verified(path: Path, write: Callable[[Path], None]) -> None:
    """Write a cache file atomically (``write(tmp)``), then its sha256 sidecar."""
    atomic_write(path, write)
    sidecar = path.with_name(path.name + ".sha256")
    atomic_write(sidecar, lambda tmp: tmp.write_text(sha256sum(path) + "\n"))
