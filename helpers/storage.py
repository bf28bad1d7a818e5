"""The one storage layer of every cache the kit computes: keyed, written atomically, verified.

Every artefact the kit computes once and reads many times (the IMDB tables, cross-validation
predictions, SVM-BOW's choices and explainers, the Doc2Vec training corpus, models and vectors,
train-test overlaps) goes through this module, under one set of rules:

- **One key.** :func:`key` hashes the artefact's parameters, the checksums of the data sets
  it is derived from, the versions of the libraries that computed it and
  :data:`CACHE_VERSION`: change any of them and the artefact is computed again.
- **Written atomically, with a checksum.** :func:`store` writes to a temporary file beside
  the artefact and renames it into place, then writes the artefact's sha256 to a sidecar
  ``<name>.sha256``. A lock file per artefact lets two processes store the same artefact at
  once without mixing one's file with the other's checksum.
- **Computed once.** While a process computes an artefact it holds a second lock file,
  ``.<name>.computing``: another process (or thread) that needs the same artefact waits for
  it and reads what it stored, rather than computing it a second time beside it.
- **Verified on every read.** :func:`load` reads an artefact only if it matches its sidecar
  and ``read`` accepts it; a process hashes one version of a file once (a file written
  since, whatever its times say, has a new change time and is hashed again). One rule for
  a bad artefact (wrong checksum, no checksum, or unreadable): it is set aside as
  ``<name>.corrupt-<timestamp>`` (kept for a look, never read), one line on stderr says so,
  and the caller computes it again.
- **A cache that cannot be stored** (a read-only folder, as in ``kit grade``'s sandbox, or a
  full disk) costs one line on stderr, not the result, unless the processes run strict
  (``helpers.settings.strict_caches``: ``kit grade --prepare``, which must leave every cache
  built).

:func:`cached` puts the rules together: load, or compute and store. Every cached value goes
through it; only the Doc2Vec training corpus, a file gensim reads by its path rather than a
value, and a model's document vectors, named by the checksum of the model they were read from
(:func:`recorded_digest`), are loaded and stored with :func:`load` and :func:`store` themselves.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from helpers import fetch, settings
from helpers.errors import InputError
from helpers.files import atomic_write, file_lock, set_aside, sha256sum
from helpers.log import LOGGER

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

T = TypeVar("T")

#: Part of every key: raise it when the kit changes how any artefact is computed or stored.
CACHE_VERSION = 2
#: Hex characters of a key (64 bits: no two artefacts of one data folder collide).
KEY_CHARS = 16
SIDECAR = ".sha256"
#: An artefact's lock file is named ``LOCK_PREFIX + name + LOCK_SUFFIX`` beside it, and the
#: lock held while it is computed ``LOCK_PREFIX + name + COMPUTING_SUFFIX``.
LOCK_PREFIX, LOCK_SUFFIX, COMPUTING_SUFFIX = ".", ".lock", ".computing"
#: The digests this process computed, by version of the file (``_version``).
_DIGESTS: dict[tuple[int, ...], str] = {}


def key(params: Mapping[str, object], datasets: Sequence[str] = (), libraries: Sequence[str] = ()) -> str:
    """The cache key of an artefact: its parameters, data, library versions and the cache version.

    Parameters
    ----------
    params : mapping
        Everything that decides the artefact's content, JSON-serialisable (name the kind of
        artefact too, so two kinds with the same parameters do not share a key).
    datasets : sequence of str
        The data sets (keys of ``helpers.fetch.DATASETS``) it is derived from: their archives'
        checksums enter the key.
    libraries : sequence of str
        Distribution names (``"gensim"``, ``"scikit-learn"``) whose versions enter the key.

    Returns
    -------
    str
        :data:`KEY_CHARS` hex characters.
    """
    blob = json.dumps({"params": params, "data": {name: fetch.stamp(name) for name in datasets},
                       "libraries": {name: metadata.version(name) for name in libraries},
                       "version": CACHE_VERSION}, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:KEY_CHARS]


def content_digest(table: pd.DataFrame, columns: Sequence[str]) -> str:
    """The sha256 of a table's ``columns``, row by row: what a cache key says of its content.

    Each value is taken as text and prefixed with its length, so that no two different
    tables give the same bytes ("ab", "c" against "a", "bc"); texts that are not valid
    UTF-8 (lone surrogates) are hashed as they are.

    Parameters
    ----------
    table : DataFrame
    columns : sequence of str
        Columns of ``table``, in the order hashed.

    Returns
    -------
    str
        64 hex characters.

    Raises
    ------
    InputError
        A column is missing.
    """
    missing = [c for c in columns if c not in table]
    if missing:
        raise InputError(f"content_digest: the table has no column {missing[0]!r}.")
    digest = hashlib.sha256()
    for row in zip(*(table[c].astype(str) for c in columns), strict=True):
        digest.update("".join(f"{len(value)}:{value}" for value in row).encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


def _sidecar(path: Path) -> Path:
    return path.with_name(path.name + SIDECAR)


def _lock_file(path: Path) -> Path:
    return path.with_name(LOCK_PREFIX + path.name + LOCK_SUFFIX)


def _computing_file(path: Path) -> Path:
    return path.with_name(LOCK_PREFIX + path.name + COMPUTING_SUFFIX)


def artefact_of(path: Path) -> Path:
    """The artefact a file of a cache folder belongs to: itself, or the artefact whose checksum
    (``<name>.sha256``) or lock file (``.<name>.lock``, ``.<name>.computing``) it is."""
    path = Path(path)
    if path.name.endswith(SIDECAR):
        return path.with_name(path.name.removesuffix(SIDECAR))
    for suffix in (LOCK_SUFFIX, COMPUTING_SUFFIX):
        if path.name.startswith(LOCK_PREFIX) and path.name.endswith(suffix):
            return path.with_name(path.name.removeprefix(LOCK_PREFIX).removesuffix(suffix))
    return path


@contextlib.contextmanager
def _locked(path: Path, exclusive: bool) -> Iterator[None]:
    """Hold the artefact's lock file (``.<name>.lock``); without one in a read-only folder."""
    if exclusive:
        path.parent.mkdir(parents=True, exist_ok=True)
    with file_lock(_lock_file(path), shared=not exclusive):
        yield  # unlocked only in a folder nobody may write to: no writer to wait for


def is_stored(path: Path) -> bool:
    """True if ``path`` and its checksum sidecar exist and agree (no reading, no setting aside)."""
    return _digest_if_stored(path)[1]


def recorded_digest(path: Path) -> str | None:
    """The sha256 that ``path``'s sidecar records (None: no sidecar), without reading the
    artefact: a name for the version stored, for artefacts derived from it (they are then
    computed again whenever it is). The artefact itself is verified when it is loaded.

    Parameters
    ----------
    path : Path
        An artefact :func:`store` wrote.

    Returns
    -------
    str or None
        64 hex digits, or None if the sidecar is missing, unreadable or holds no digest.
    """
    try:
        with _locked(Path(path), exclusive=False):  # not between a store's artefact and its sidecar
            digest = _sidecar(Path(path)).read_text().strip()
    except (OSError, UnicodeDecodeError):
        return None
    return digest if len(digest) == 64 and all(c in "0123456789abcdef" for c in digest) else None


def _digest_if_stored(path: Path) -> tuple[str | None, bool]:
    """The file's sha256 (None if unreadable) and whether its sidecar holds it."""
    try:
        digest = _sha256(path)
    except OSError:
        return None, False
    try:
        return digest, _sidecar(path).read_text().strip() == digest
    except OSError:
        return digest, False


def _version(path: Path) -> tuple[int, ...]:
    """What tells one content of a file from another without reading it: its device, inode,
    size, and modification and change times. Nobody can set a change time back, so a file
    written since (in place, or replaced) has another version."""
    info = path.stat()
    return info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns


def _sha256(path: Path) -> str:
    """``sha256sum(path)``, hashed once per version of the file in this process: a notebook
    reads the same tables and models many times, each read verified."""
    version = _version(path)
    if version not in _DIGESTS:
        digest = sha256sum(path)
        if _version(path) != version:  # written while it was hashed: hashed again next time
            return digest
        _DIGESTS[version] = digest
    return _DIGESTS[version]


def load(path: Path, read: Callable[[Path], T]) -> T | None:
    """Read a stored artefact if it is intact; None if it must be computed (again).

    Parameters
    ----------
    path : Path
        The artefact.
    read : callable
        ``read(path)`` returns the artefact's value; it may raise (any exception) or return
        None for content it cannot use, which counts as a bad artefact.

    Returns
    -------
    The value, or None when there is no artefact or it was bad (then set aside, see
    :func:`set_aside`).
    """
    path = Path(path)
    with _locked(path, exclusive=False):
        if not path.is_file():
            return None
        digest, intact = _digest_if_stored(path)
        value, why = None, "does not match its checksum (or has none)"
        if intact:
            try:
                value = read(path)
                why = "holds content that does not fit what it should be"
            except Exception as err:  # noqa: BLE001 - any failure to read means: compute it again
                why = f"could not be read ({type(err).__name__}: {err})"
    if value is None:
        _set_aside_if_unchanged(path, digest, why)
    return value


def _set_aside_if_unchanged(path: Path, digest: str | None, why: str) -> None:
    """Set the bad file aside, unless another process has replaced (or removed) it meanwhile."""
    with _locked(path, exclusive=True):
        try:
            unchanged = sha256sum(path) == digest
        except OSError:  # gone: another reader set it aside
            return
        if unchanged:
            set_aside(path, why)


def store(path: Path, write: Callable[[Path], object]) -> bool:
    """Store an artefact: ``write(tmp)`` atomically to ``path``, then its checksum sidecar.

    Returns
    -------
    bool
        False when the folder cannot be written (read-only, disk full): one line on stderr
        says so, and the caller keeps its computed value. Where caches are strict
        (``helpers.settings.strict_caches``) the error is raised instead.
    """
    path = Path(path)
    try:
        with _locked(path, exclusive=True):
            atomic_write(path, write)
            digest = sha256sum(path)
            atomic_write(_sidecar(path), lambda tmp: tmp.write_text(digest + "\n"))
    except OSError as err:
        if settings.strict_caches():
            raise
        LOGGER.warning(f"{path.name} was computed but not kept as a cache ({err.strerror or err}).")
        return False
    return True


def cached(path: Path | None, compute: Callable[[], T], write: Callable[[T, Path], None],
           read: Callable[[Path], T | None]) -> T:
    """The stored artefact at ``path`` if intact; else ``compute()``, stored with ``write``.

    One process computes an artefact at a time: another that needs it meanwhile waits for
    the first (``.<name>.computing``) and reads what it stored. A computation that refuses its
    input (``InputError``, found only once the work began) leaves no folder it made.

    Parameters
    ----------
    path : Path or None
        Where the artefact is cached; None to compute it without a cache.
    compute : callable
        ``compute()`` returns the value.
    write : callable
        ``write(value, tmp)`` writes the value to a file.
    read : callable
        ``read(path)`` reads it back (see :func:`load`).
    """
    if path is None:
        return compute()
    found = load(path, read)
    if found is not None:
        return found
    made = _make_folders(path.parent)
    try:
        with file_lock(_computing_file(path)):
            found = load(path, read)  # stored by another process while this one waited
            if found is not None:
                return found
            value = compute()
            store(path, lambda tmp: write(value, tmp))
    except InputError:
        if made:  # nothing left behind by a computation that refused its input
            for lock in (_computing_file(path), _lock_file(path)):
                with contextlib.suppress(OSError):
                    lock.unlink()
            for folder in reversed(made):
                with contextlib.suppress(OSError):  # not empty: another process uses it
                    folder.rmdir()
        raise
    return value


def _make_folders(folder: Path) -> list[Path]:
    """Make ``folder`` and its missing parents; return those made, outermost first (none if it
    cannot be made: the artefact is then computed without its lock)."""
    missing = [parent for parent in (folder, *folder.parents) if not parent.exists()][::-1]
    with contextlib.suppress(OSError):
        folder.mkdir(parents=True, exist_ok=True)
    return [made for made in missing if made.is_dir()]


def write_array(values: np.ndarray, tmp: Path) -> None:
    """Write an array to ``tmp`` in numpy's ``.npy`` format: a ``write`` for :func:`cached`."""
    import numpy as np  # here: `kit check` alone imports this module and no numpy

    with open(tmp, "wb") as handle:  # a handle: np.save would add ".npy" to a name
        np.save(handle, values, allow_pickle=False)


def read_array(path: Path, shape: tuple[int, ...], kind: str = "f") -> np.ndarray | None:
    """The array :func:`write_array` wrote to ``path`` (never unpickled): a ``read`` for
    :func:`cached`, which holds only numbers of this ``shape`` and numpy dtype ``kind``
    (``"f"``, floating: every one finite; ``"i"``, signed whole numbers); else None (a bad
    artefact, computed again)."""
    import numpy as np

    found = np.load(path, allow_pickle=False)
    fits = found.shape == tuple(shape) and found.dtype.kind == kind
    return found if fits and (kind != "f" or np.isfinite(found).all()) else None
