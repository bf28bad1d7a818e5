"""Fetch the kit's corpora (checksummed, atomically written) and load them as DataFrames.

Data sets and where they live inside the data folder (``helpers.settings.data_dir()``)::

    nltk_data/corpora/<name>.zip   + nltk_data/corpora/<name>/   (NLTK corpora)
    aclImdb_v1.tar.gz              + aclImdb/                    (Large Movie Review Dataset)

A local source folder (``KIT_DATA_SOURCE`` or ``kit fetch --source DIR``) has the same
layout for the archives and replaces the network; everything after obtaining the archive
(checksum, atomic rename, extraction, loading) is the same code either way.
"""

from __future__ import annotations

import hashlib
import io
import os
import re
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

import pandas as pd
from tqdm import tqdm

from helpers import settings
from helpers.errors import KitError
from helpers.text import HTML_BREAK

CHUNK = 1 << 20
STAMP = ".kit-verified"
IMDB_URL = "https://ai.stanford.edu/~amaas/data/sentiment/aclImdb_v1.tar.gz"


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
        ``{name: "present" | "fetched"}``.

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
            status[name] = "present"
            continue
        try:
            _fetch_one(DATASETS[name], root, src, progress)
        except OSError as err:
            raise KitError(
                f"Could not write {name} into {root}: {err}. Free some disk space or point "
                "KIT_DATA_DIR at a writable folder, then run `kit fetch` again."
            ) from err
        status[name] = "fetched"
    return status


def _fetch_one(ds: Dataset, root: Path, source: Path | None, progress: bool) -> None:
    archive = root / ds.archive
    archive.parent.mkdir(parents=True, exist_ok=True)
    if archive.exists() and sha256sum(archive) not in ds.sha256:
        _move_aside(archive)
    if not archive.exists():
        _obtain(ds, archive, source, progress)
    _extract(ds, archive, root / ds.folder, progress)


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
            aside = archive.with_name(f"{archive.name}.corrupt-{digest[:12]}")
            tmp.replace(aside)
            origin = source / ds.archive if source else (ds.url or f"nltk.download({ds.name!r})")
            raise KitError(
                f"{ds.name}: the file from {origin} has sha256 {digest}, expected one of "
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
                    tf.extract(member, tmp, filter="data")
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


# --------------------------------------------------------------------------- loaders


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


def load_movie_reviews() -> pd.DataFrame:
    """Load the 2,000 Pang & Lee movie reviews (polarity dataset v2.0).

    Returns
    -------
    DataFrame
        One row per review in NLTK's order (all neg, then all pos, by file name), with
        columns ``doc_id`` (e.g. ``cv123_12345``), ``cv`` (int 0–999), ``fold`` (the
        round-robin fold ``cv % 10``), ``label`` (``pos``/``neg``) and ``text`` (the corpus's
        own tokenisation, space-joined).
    """
    root = require("movie_reviews")
    rows = []
    for label in ("neg", "pos"):
        for path in sorted((root / label).glob("*.txt")):
            cv = int(path.stem[2:5])
            text = " ".join(path.read_text(encoding="utf-8").split())
            rows.append((path.stem, cv, cv % 10, label, text))
    return pd.DataFrame(rows, columns=["doc_id", "cv", "fold", "label", "text"])


IMDB_SPLITS = ("train", "test", "unsup")
_MOVIE_ID = re.compile(r"/title/(tt\d+)/")


def load_imdb(split: str) -> pd.DataFrame:
    """Load one split of the Large Movie Review Dataset (Maas et al. 2011).

    The first load of a split reads its files and caches the table under
    ``data/cache/`` (keyed by the archive checksum); later loads read the cache.

    Parameters
    ----------
    split : {"train", "test", "unsup"}
        ``unsup`` is the 50,000 unlabelled reviews (stored under ``train/unsup``).

    Returns
    -------
    DataFrame
        Columns ``doc_id`` (e.g. ``train_pos_123``), ``label`` (``pos``/``neg``; None for
        unsup), ``rating`` (1–10 from the file name; 0 for unsup), ``movie_id`` (IMDB title
        id from the ``urls_*.txt`` files; reviews of the same film share it), ``text`` (with
        HTML line breaks replaced by spaces). Rows are ordered by label, then review id.
    """
    if split not in IMDB_SPLITS:
        raise KitError(f"Unknown IMDB split {split!r}; choose one of {IMDB_SPLITS}.")
    root = require("imdb")
    cache = settings.data_dir() / "cache" / f"imdb_{split}_{stamp('imdb')[:12]}.pkl"
    if cache.is_file():
        return pd.read_pickle(cache)
    table = _read_imdb(root, split)
    atomic_write(cache, table.to_pickle)
    return table


def _read_imdb(root: Path, split: str) -> pd.DataFrame:
    folder, labels = (root / "train", ["unsup"]) if split == "unsup" else (root / split, ["neg", "pos"])
    frames = []
    for label in labels:
        urls = (folder / f"urls_{label}.txt").read_text(encoding="utf-8").split()
        movie_ids = [m.group(1) if (m := _MOVIE_ID.search(u)) else None for u in urls]
        files = sorted((folder / label).glob("*.txt"), key=lambda p: int(p.stem.split("_")[0]))
        ids = [int(p.stem.split("_")[0]) for p in files]
        frames.append(pd.DataFrame({
            "doc_id": [f"{split}_{label}_{i}" for i in ids],
            "label": None if label == "unsup" else label,
            "rating": [int(p.stem.split("_")[1]) for p in files],
            "movie_id": [movie_ids[i] for i in ids],
            "text": [HTML_BREAK.sub(" ", p.read_text(encoding="utf-8")) for p in tqdm(
                files, desc=f"read imdb {split}/{label}", leave=False)],
        }))
    return pd.concat(frames, ignore_index=True)


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


def load_sentence_polarity() -> pd.DataFrame:
    """Load the 10,662 Rotten Tomatoes snippets (sentence polarity dataset v1.0).

    Returns
    -------
    DataFrame
        Columns ``text`` (tokenised, lowercase, as distributed), ``label`` (``pos``/``neg``)
        and ``source`` (``rotten_tomatoes``).
    """
    root = require("sentence_polarity")
    rows = []
    for label in ("neg", "pos"):
        raw = (root / f"rt-polarity.{label}").read_bytes().decode("utf-8", errors="replace")
        rows += [(line.strip(), label) for line in raw.splitlines() if line.strip()]
    table = pd.DataFrame(rows, columns=["text", "label"])
    table["source"] = "rotten_tomatoes"
    return table


_FEATURE_SCORE = re.compile(r"\[([+-]\d)\]")


def load_product_reviews() -> pd.DataFrame:
    """Load the customer review sentences of ``product_reviews_1`` and ``product_reviews_2``.

    A sentence's label is the sign of the sum of its feature scores (``[+2]``, ``[-1]``, ...);
    sentences with no score or a zero sum are neutral and dropped.

    Returns
    -------
    DataFrame
        Columns ``text``, ``label`` (``pos``/``neg``), ``source`` (the corpus name) and
        ``product`` (the file name without ``.txt``).
    """
    rows = []
    for corpus in ("product_reviews_1", "product_reviews_2"):
        root = require(corpus)
        for path in sorted(root.glob("*.txt")):
            if path.stem.lower() == "readme":
                continue
            for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
                annotation, sep, sentence = line.partition("##")
                if not sep or not sentence.strip():
                    continue
                score = sum(int(s) for s in _FEATURE_SCORE.findall(annotation))
                if score:
                    label = "pos" if score > 0 else "neg"
                    rows.append((sentence.strip(), label, corpus, path.stem))
    return pd.DataFrame(rows, columns=["text", "label", "source", "product"])


def load_opinion_lexicon() -> dict[str, frozenset[str]]:
    """Load Hu & Liu's opinion lexicon as ``{"pos": words, "neg": words}``."""
    root = require("opinion_lexicon")
    lexicon = {}
    for label, name in (("pos", "positive-words.txt"), ("neg", "negative-words.txt")):
        lines = (root / name).read_bytes().decode("latin-1").splitlines()
        lexicon[label] = frozenset(w.strip() for w in lines if w.strip() and not w.startswith(";"))
    return lexicon


def load_stopwords(language: str = "english") -> frozenset[str]:
    """Load NLTK's stop word list for ``language``."""
    path = require("stopwords") / language
    if not path.is_file():
        raise KitError(f"NLTK has no stop word list for {language!r}.")
    return frozenset(path.read_text(encoding="utf-8").split())


# --------------------------------------------------------------------------- your own reviews

LABELS = ("neg", "pos")
IMDB_SAMPLE_SEED = 0


def load_reviews(path: str | Path) -> pd.DataFrame:
    """Load labelled reviews you collected: a folder with ``pos/`` and ``neg/``, or a CSV.

    A folder holds one review per ``.txt`` file (UTF-8) in subfolders named ``pos`` and
    ``neg``; a CSV (UTF-8) has a ``text`` and a ``label`` column (``pos``/``neg``, any case)
    and optionally an ``id`` column. Nothing is modified.

    Parameters
    ----------
    path : str or Path
        The folder or the ``.csv`` file.

    Returns
    -------
    DataFrame
        Columns ``doc_id`` (``pos/<file name>`` for a folder; the ``id`` column or ``row<N>``,
        N the CSV line number, for a CSV), ``label`` and ``text`` (whitespace collapsed).

    Raises
    ------
    KitError
        The path does not exist; the folder has no reviews, or subfolders or a CSV have
        labels other than pos/neg; a file is not UTF-8 (named); a review is empty; two
        reviews have the same text (both named).
    """
    path = Path(path)
    if not path.exists():
        raise KitError(f"{path} does not exist: give a folder with pos/ and neg/ of .txt files, "
                       "or a .csv file with text,label columns.")
    table = _read_review_folder(path) if path.is_dir() else _read_review_csv(path)
    table["text"] = [" ".join(HTML_BREAK.sub(" ", t).split()) for t in table.text]
    empty = table.doc_id[table.text == ""].tolist()
    if empty:
        raise KitError(f"{path}: empty review(s) {', '.join(empty[:5])}: write some text or remove them.")
    twins = table[table.text.duplicated(keep=False)].groupby("text").doc_id.apply(list)
    if len(twins):
        pairs = "; ".join(" = ".join(ids) for ids in twins.iloc[:3])
        raise KitError(f"{path}: {len(twins)} text(s) occur more than once ({pairs}): "
                       "keep one copy of each review.")
    return table.reset_index(drop=True)


def _read_review_folder(folder: Path) -> pd.DataFrame:
    others = sorted(p.name for p in folder.iterdir()
                    if p.is_dir() and p.name not in LABELS and not p.name.startswith("."))
    if others:
        raise KitError(f"{folder}: subfolders must be named pos and neg, found {', '.join(others)}: "
                       "move those reviews into pos/ or neg/.")
    rows = []
    for label in LABELS:
        for file in sorted((folder / label).glob("*.txt")):
            rows.append((f"{label}/{file.name}", label, _read_utf8(file.read_bytes(), file)))
    if not rows:
        raise KitError(f"{folder} holds no reviews: put one review per .txt file into "
                       f"{folder / 'pos'} and {folder / 'neg'}.")
    return pd.DataFrame(rows, columns=["doc_id", "label", "text"])


def _read_review_csv(file: Path) -> pd.DataFrame:
    if file.suffix.lower() != ".csv":
        raise KitError(f"{file} is neither a folder nor a .csv file.")
    table = read_text_csv(file)
    missing = {"text", "label"} - set(table.columns)
    if missing:
        raise KitError(f"{file} needs the columns text and label (missing: {', '.join(sorted(missing))}).")
    if table.empty:
        raise KitError(f"{file} holds no reviews: add rows of text,label.")
    labels = table.label.str.strip().str.lower()
    bad = table.index[~labels.isin(LABELS)]
    if len(bad):
        examples = ", ".join(f"line {i + 2}: {table.label[i]!r}" for i in bad[:5])
        raise KitError(f"{file}: labels must be pos or neg ({len(bad)} are not; {examples}).")
    ids = table["id"] if "id" in table.columns else [f"row{i + 2}" for i in table.index]
    return pd.DataFrame({"doc_id": ids, "label": labels, "text": table.text})


def read_text_csv(file: Path) -> pd.DataFrame:
    """Read a UTF-8 CSV file with every cell as a string (empty cells as "").

    Raises
    ------
    KitError
        The file is not UTF-8 (named, with the byte), or not a readable CSV.
    """
    text = _read_utf8(file.read_bytes(), file)
    try:
        return pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as err:
        raise KitError(f"{file} is not a readable CSV ({err}).") from None


def _read_utf8(raw: bytes, file: Path) -> str:
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise KitError(f"{file} is not UTF-8 text (byte {err.start}): save it as UTF-8 and retry.") from None


def imdb_sample(n: int = 1000, seed: int = IMDB_SAMPLE_SEED) -> pd.DataFrame:
    """A fixed, seeded sample of IMDB test reviews, ``n // 2`` of each label, in doc_id order."""
    test = load_imdb("test")
    if not 2 <= n <= len(test):
        raise KitError(f"n must be between 2 and {len(test)}, not {n}.")
    sample = test.groupby("label", group_keys=False).sample(n // 2, random_state=seed)
    return sample.sort_index().reset_index(drop=True)


def load_deployment(folder: str | Path | None = None) -> pd.DataFrame | None:
    """Your own reviews in ``data/deployment/`` (see its README), or None if you added none.

    The folder may hold ``pos/`` and ``neg/`` subfolders of ``.txt`` files, or one ``.csv``
    file (``text,label``); see ``load_reviews``.
    """
    folder = Path(folder) if folder is not None else settings.data_dir() / "deployment"
    if any((folder / label).is_dir() for label in LABELS):
        return load_reviews(folder)
    tables = sorted(folder.glob("*.csv")) if folder.is_dir() else []
    if len(tables) > 1:
        raise KitError(f"{folder} holds several CSV files ({', '.join(t.name for t in tables)}): keep one.")
    return load_reviews(tables[0]) if tables else None
