"""Doc2Vec document embeddings (Le & Mikolov's paragraph vectors) trained on IMDB reviews.

Training data: the Large Movie Review Dataset's 100,000 review texts (train, test and
unlabelled; no labels are used) but ``held_out_reviews()``: every review of a film in the
deployment sample of notebooks 05 and 07 (10,774) and every near copy of a deployment review
(31 more; none of the 2,000 reviews has one), so 89,195 remain, tokenised with the kit's
shared tokeniser, shuffled once (seeded) and written as a LineSentence file under
``data/corpora/`` for gensim's fast ``corpus_file`` mode. The 2,000 Pang & Lee reviews are
*not* in the training data by default: their vectors come from ``infer_vector``, so nothing
of any test fold leaks into the embedding. ``transductive=True`` trains them in (texts only) for comparison.

Two profiles (``KIT_PROFILE`` or a ``profile`` argument):

- ``quick``: all 89,195 of those reviews, 10 epochs, one worker: the handout's model,
  deterministic (with ``PYTHONHASHSEED=0``; bit for bit on one CPU). The checked notebook
  outputs come from it; it trains once (308 s on one core here) and is cached.
- ``full``: the same reviews, gensim's 20 epochs, all cores (faster per epoch, not reproducible).

``sample_config`` sizes a model for a seeded 10,000-review sample (``SAMPLE_DOCS``): the
cheap models that notebook 04 compares settings on.

Training corpora, trained models and inferred vectors are cached under ``data/corpora/`` and
``data/models/`` by ``helpers.storage``: keyed by every parameter, the data's checksums and
the libraries' versions, verified on every read; a bad file is set aside and rebuilt, never used.
"""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from gensim.models import Doc2Vec
from gensim.models.callbacks import CallbackAny2Vec
from joblib import Parallel, delayed
from sklearn.preprocessing import StandardScaler
from tqdm import tqdm

from helpers import data, overlap, settings, storage
from helpers.errors import InputError, KitError
from helpers.evaluation import C_GRID, Classifier, fit_svm
from helpers.text import tokenize
from helpers.validation import check_int, check_texts

#: What every model and its vectors are derived from, and what computes them.
SOURCES = ("imdb", "movie_reviews")
LIBRARIES = ("gensim", "numpy", "scipy")
#: The seeded sample that notebook 04's comparison of settings trains on (``sample_config``).
SAMPLE_DOCS = 10_000
#: The full profile trains as gensim's IMDB tutorial does: 20 epochs (benchmarks/bench_doc2vec_imdb.py
#: measures its public protocol: 10.3-10.4 % error at 20 epochs, 10.8-10.9 % at 10).
FULL_EPOCHS = 20
#: The parameters that decide the training corpus.
CORPUS_PARAMETERS = ("n_docs", "exclude_deployment", "transductive", "shuffle", "seed")
#: What ``exclude_deployment`` leaves out of a training corpus (``held_out_reviews``). The deployment
#: sample's films are held out, not only its texts: IMDB has up to 30 reviews of a film, and a model
#: trained on a film's other reviews has seen its plot, cast and title, so testing on it would not
#: be transport to unseen reviews. Near copies of the 2,000 reviews are held out too, since their
#: vectors are inferred from the model. Part of every corpus's and model's key.
HOLD_OUT_RULE = ("every review of a deployment review's film; every review at least leakage.NEAR_DUPLICATE "
                 "similar (unigram cosine) to a deployment review or to one of the 2,000 reviews")


@dataclass(frozen=True)
class Doc2VecConfig:
    """One Doc2Vec model: gensim's settings plus what it is trained on.

    Defaults follow gensim's IMDB tutorial (vector_size 100, min_count 2, negative 5,
    sample 0) except ``epochs``: 10 instead of 20, the quick profile's (half the training
    time; notebook 04's full-profile table: 89.2 % against 89.6 % for 20, within the folds'
    spread); ``config_for("full")`` trains the tutorial's 20.

    Parameters
    ----------
    dm : {0, 1}
        0: PV-DBOW (distributed bag of words); 1: PV-DM with the context vectors averaged.
    vector_size, window, min_count, negative, sample, epochs
        As in ``gensim.models.Doc2Vec``.
    dbow_words : {0, 1}
        PV-DBOW only: also train word vectors (skip-gram) in the same space (slower).
    n_docs : int, optional
        Train on a seeded sample of this many IMDB reviews; None: all of them.
    exclude_deployment : bool
        Leave out ``held_out_reviews()``: every review of a film in the deployment sample
        (``data.imdb_sample()``, notebooks 05 and 07) and every near copy of a deployment review
        or of one of the 2,000 reviews, so that those tests measure films and texts the model
        never saw.
    transductive : bool
        Also train on the 2,000 Pang & Lee review texts (no labels), and use their trained
        vectors instead of inferring them.
    shuffle : bool
        Shuffle the training documents once (seeded). Leave on: see notebook 04.
    seed : int
        gensim's seed, the sample's and the shuffle's.
    """

    dm: int = 0
    vector_size: int = 100
    window: int = 10
    min_count: int = 2
    negative: int = 5
    sample: float = 0.0
    epochs: int = 10
    dbow_words: int = 0
    n_docs: int | None = None
    exclude_deployment: bool = True
    transductive: bool = False
    shuffle: bool = True
    seed: int = 0

    def key(self, hashed_as_reference: bool | None = None) -> str:
        """Hash of every parameter, the data's checksums, gensim's version and the cache version.

        A model trained by a Python that hashes strings unlike the reference run's gets
        other initial vectors, so its key says so: it is never taken for the kit's model.
        ``hashed_as_reference`` says how the Python that trains it hashes (default: as this
        one, ``reference_hashing``).
        """
        reference = reference_hashing() if hashed_as_reference is None else hashed_as_reference
        hashing = {} if reference else {"hashing": "randomised"}
        return _hash({"artefact": "doc2vec model", **asdict(self), **hashing, **self._hold_out()})

    def corpus_key(self) -> str:
        """Hash of what decides the training corpus (not the model's settings)."""
        return _hash({"artefact": "doc2vec corpus",
                      **{k: getattr(self, k) for k in CORPUS_PARAMETERS}, **self._hold_out()})

    def _hold_out(self) -> dict:
        return _hold_out_parameters() if self.exclude_deployment else {}

    @property
    def name(self) -> str:
        kind = "PV-DM" if self.dm else ("PV-DBOW+words" if self.dbow_words else "PV-DBOW")
        return f"{kind} {self.vector_size}d {self.epochs}ep"


def _hold_out_parameters() -> dict:
    return {"hold_out": HOLD_OUT_RULE, "threshold": overlap.NEAR_DUPLICATE}


def reference_hashing() -> bool:
    """Whether this Python hashes strings as the reference run did (it started with PYTHONHASHSEED=0).

    gensim seeds each document's initial vector with Python's ``hash``. ``sys.flags`` tells how
    this interpreter started, which a later change to ``os.environ`` (as Dask's workers
    make) does not.
    """
    return sys.flags.hash_randomization == 0


def _hash(params: dict) -> str:
    return storage.key(params, datasets=SOURCES, libraries=LIBRARIES)


def config_for(profile: str | None = None, **params) -> Doc2VecConfig:
    """A Doc2VecConfig for a profile; ``params`` override.

    ``quick``: every review but the deployment sample, 10 epochs. ``full``: the same
    reviews, ``FULL_EPOCHS`` (20) epochs.
    """
    sized = {} if settings.profile(profile) == "quick" else {"epochs": FULL_EPOCHS}
    return Doc2VecConfig(**{**sized, **params})


def sample_config(**params) -> Doc2VecConfig:
    """A quick-profile Doc2VecConfig on the seeded ``SAMPLE_DOCS``-review sample; ``params`` override."""
    return Doc2VecConfig(**{"n_docs": SAMPLE_DOCS, **params})


def workers_for(profile: str | None = None) -> int:
    """Worker threads: 1 in the quick profile (bit-for-bit reproducible), else all cores."""
    return 1 if settings.profile(profile) == "quick" else (os.cpu_count() or 1)


# --------------------------------------------------------------------------- training corpus


def training_documents(config: Doc2VecConfig) -> list[str]:
    """The doc ids of the training corpus, in training order (held out, sampled, extended, shuffled)."""
    imdb = pd.concat([data.load_imdb(split)[["doc_id"]] for split in data.IMDB_SPLITS], ignore_index=True)
    ids = imdb.doc_id[~held_out(imdb.doc_id)] if config.exclude_deployment else imdb.doc_id
    ids = ids.reset_index(drop=True)
    rng = np.random.default_rng(config.seed)
    if config.n_docs is not None:
        check_int(config.n_docs, "n_docs", 1, len(ids))
        ids = ids.iloc[np.sort(rng.choice(len(ids), config.n_docs, replace=False))]
    ids = ids.tolist()
    if config.transductive:
        ids += data.load_movie_reviews().doc_id.tolist()
    if config.shuffle:
        ids = [ids[i] for i in rng.permutation(len(ids))]
    return ids


def held_out_reviews(progress: bool = True) -> pd.DataFrame:
    """The IMDB reviews every training corpus leaves out, and why (``HOLD_OUT_RULE``).

    Returns
    -------
    DataFrame
        ``doc_id`` and ``reason``: ``"deployment film"`` (a review of a film that a deployment
        review is about, the deployment reviews themselves included), else ``"near copy of a
        deployment review"`` or ``"near copy of one of the 2,000 reviews"`` (unigram cosine at
        least ``overlap.NEAR_DUPLICATE``). Computed once (about a minute) and cached.
    """
    key = _hash({"artefact": "held out", **_hold_out_parameters()})
    path = settings.data_dir() / "cache" / f"held_out_{key}.csv"
    return storage.cached(path, lambda: _held_out_reviews(progress),
                          lambda table, tmp: table.to_csv(tmp, index=False), _read_held_out)


def _held_out_reviews(progress: bool) -> pd.DataFrame:
    imdb = pd.concat([data.load_imdb(split)[["doc_id", "movie_id", "text"]] for split in data.IMDB_SPLITS],
                     ignore_index=True)
    deployment = data.imdb_sample()
    reasons = [
        ("deployment film", imdb.movie_id.isin(set(deployment.movie_id)).to_numpy()),
        ("near copy of a deployment review",
         overlap.near_copies(imdb.text.tolist(), deployment.text.tolist(), progress=progress)),
        ("near copy of one of the 2,000 reviews",
         overlap.near_copies(imdb.text.tolist(), data.load_movie_reviews().text.tolist(), progress=progress)),
    ]
    reason = pd.Series(pd.NA, index=imdb.index, dtype="object")
    for name, found in reversed(reasons):  # the first rule that applies names the reason
        reason[found] = name
    kept = reason.notna()
    return pd.DataFrame({"doc_id": imdb.doc_id[kept], "reason": reason[kept]}).reset_index(drop=True)


def _read_held_out(path: Path) -> pd.DataFrame | None:
    table = pd.read_csv(path, dtype=str, keep_default_na=False)
    return table if list(table.columns) == ["doc_id", "reason"] and table.doc_id.is_unique else None


def held_out(doc_ids) -> np.ndarray:
    """Which of these doc ids a training corpus leaves out (``held_out_reviews``)."""
    return pd.Index(doc_ids).isin(held_out_reviews(progress=False).doc_id)


def texts_by_id() -> pd.Series:
    """Every text the kit can train on (IMDB's 100k and the 2,000 reviews), indexed by doc_id."""
    imdb = pd.concat([data.load_imdb(split)[["doc_id", "text"]] for split in data.IMDB_SPLITS])
    reviews = data.load_movie_reviews()[["doc_id", "text"]]
    return pd.concat([imdb, reviews]).set_index("doc_id").text


def corpus_file(config: Doc2VecConfig, progress: bool = True) -> tuple[Path, list[str]]:
    """Write (once) the LineSentence file gensim trains on; return it and its doc ids by line.

    Line i holds document ``ids[i]``'s tokens separated by spaces; in ``corpus_file`` mode
    its tag is the line number i.
    """
    stem = f"d2v_{config.corpus_key()}"
    folder = settings.data_dir() / "corpora"
    path, id_path = folder / f"{stem}.txt", folder / f"{stem}.ids"
    ids = storage.load(id_path, _read_ids)
    if ids is not None and storage.load(path, lambda found: found) is not None:
        return path, ids
    ids = training_documents(config)
    texts = texts_by_id()

    def write(tmp: Path) -> None:
        with open(tmp, "w", encoding="utf-8") as out:
            for doc_id in tqdm(ids, desc="write training corpus", disable=not progress, leave=False):
                out.write(" ".join(tokenize(texts[doc_id])) + "\n")

    id_text = "\n".join(ids) + "\n"
    if not (storage.store(path, write) and storage.store(id_path, lambda tmp: tmp.write_text(id_text))):
        raise KitError(f"Doc2Vec trains from a corpus file, and {path} could not be written (the line above "
                       "says why): free some disk space or point KIT_DATA_DIR at a writable folder.")
    return path, ids


def _read_ids(path: Path) -> list[str] | None:
    ids = path.read_text().split()
    return ids if ids and len(set(ids)) == len(ids) else None


# --------------------------------------------------------------------------- models and vectors


class EpochProgress(CallbackAny2Vec):
    """A tqdm bar advanced by gensim at the end of every training epoch."""

    def __init__(self, epochs: int, desc: str, enabled: bool = True) -> None:
        self.bar = tqdm(total=epochs, desc=desc, unit="epoch", disable=not enabled, leave=False)

    def on_epoch_end(self, model: Doc2Vec) -> None:
        self.bar.update()

    def on_train_end(self, model: Doc2Vec) -> None:
        self.bar.close()


def _check_config(config: object) -> None:
    if not isinstance(config, Doc2VecConfig):
        raise InputError(f"config must be a Doc2VecConfig, not {type(config).__name__}.")


def doc2vec_arguments(config: Doc2VecConfig, workers: int | None = None) -> dict:
    """gensim's ``Doc2Vec`` keyword arguments for ``config``: all but the corpus and callbacks.

    What ``train`` passes, so that a benchmark can train the kit's model from another input
    (``documents=`` instead of ``corpus_file=``) with the very same settings.

    Parameters
    ----------
    config : Doc2VecConfig
    workers : int, optional
        Worker threads (default: ``workers_for()``).

    Raises
    ------
    InputError
        ``config`` is not a Doc2VecConfig, or ``workers`` not a whole number >= 1.
    """
    _check_config(config)
    if workers is not None:
        check_int(workers, "workers")
    return dict(dm=config.dm, dm_mean=1, vector_size=config.vector_size, window=config.window,
                min_count=config.min_count, negative=config.negative, hs=0, sample=config.sample,
                epochs=config.epochs, dbow_words=config.dbow_words, seed=config.seed,
                workers=workers or workers_for())


def train(config: Doc2VecConfig, workers: int | None = None, progress: bool = True) -> Doc2Vec:
    """Train (or load from the cache) one Doc2Vec model in ``corpus_file`` mode.

    Parameters
    ----------
    config : Doc2VecConfig
    workers : int, optional
        Worker threads (default: ``workers_for()``; 1 is reproducible bit for bit).
    progress : bool
        A progress bar per epoch.
    """
    def compute() -> Doc2Vec:
        if not reference_hashing():
            warnings.warn("Python started without PYTHONHASHSEED=0: gensim's initial vectors (and so "
                          "this model) differ from the reference's; the model is cached apart from it. "
                          "Start Jupyter with `kit lab`.", stacklevel=4)
        corpus, _ = corpus_file(config, progress)
        bar = EpochProgress(config.epochs, f"train {config.name}", progress)
        model = Doc2Vec(corpus_file=str(corpus), **doc2vec_arguments(config, workers), callbacks=[bar])
        model.callbacks = ()  # the bar is not worth pickling
        return model

    return storage.cached(model_path(config), compute, _save_model, lambda stored: Doc2Vec.load(str(stored)))


def _save_model(model: Doc2Vec, tmp: Path) -> None:
    with open(tmp, "wb") as handle:  # one file: gensim stores big arrays inline in a handle
        model.save(handle)


def model_path(config: Doc2VecConfig, hashed_as_reference: bool | None = None) -> Path:
    """Where ``train`` caches ``config``'s model (under ``data/models/``, keyed by ``config.key()``);
    ``hashed_as_reference``: where a Python that hashes so caches it (default: this one; a
    kernel that ``kit check`` or ``kit lab`` starts hashes as the reference)."""
    return settings.data_dir() / "models" / f"d2v_{config.key(hashed_as_reference)}.model"


def _vector_path(config: Doc2VecConfig, infer_epochs: int | None) -> Path:
    return settings.data_dir() / "models" / f"vectors_{config.key()}_{infer_epochs or config.epochs}.npy"


def review_vectors(config: Doc2VecConfig, workers: int | None = None, infer_epochs: int | None = None,
                   progress: bool = True) -> np.ndarray:
    """Vectors for the 2,000 Pang & Lee reviews, in ``load_movie_reviews()`` order.

    Inferred with ``infer_vectors`` from a model that never saw them, or, for a transductive
    model, the vectors it trained. Cached under ``data/models/``.

    Returns
    -------
    ndarray of shape (2000, vector_size)
    """
    def compute() -> np.ndarray:
        reviews = data.load_movie_reviews()
        if not config.transductive:
            return _inferred(config, reviews.text.tolist(), workers, infer_epochs, progress)
        model = train(config, workers, progress)
        _, ids = corpus_file(config, progress)
        line = {doc_id: i for i, doc_id in enumerate(ids)}
        return np.vstack([model.dv[line[d]] for d in reviews.doc_id])

    shape = (data.MOVIE_REVIEWS, config.vector_size)
    return storage.cached(_vector_path(config, infer_epochs), compute, storage.write_array,
                          lambda stored: storage.read_array(stored, shape))


#: Fewer texts than this are inferred in under a second: not worth three files in the cache.
INFER_CACHE_MIN = 500


def infer_vectors(config: Doc2VecConfig, texts, workers: int | None = None,
                  infer_epochs: int | None = None, progress: bool = True) -> np.ndarray:
    """Infer document vectors for any texts from ``config``'s model (trained if not cached).

    Inference starts from the model's seed and goes through the texts in order, so the same
    model and texts give the same vectors (with ``PYTHONHASHSEED=0``, which gensim's initial
    vectors depend on). For ``INFER_CACHE_MIN`` texts or more they are cached under
    ``data/models/``, keyed by the model, the texts in their order and the epochs.

    Parameters
    ----------
    texts : sequence of str
        Raw texts; tokenised with ``helpers.text.tokenize``.
    infer_epochs : int, optional
        Passes of ``infer_vector`` per text (default: the model's epochs).

    Returns
    -------
    ndarray of shape (n_texts, vector_size)

    Raises
    ------
    InputError
        ``texts`` not a sequence of strings; ``infer_epochs`` not None or a whole number >= 1.
    """
    texts = check_texts(texts, "texts", allow_empty=True)
    if infer_epochs is not None:
        check_int(infer_epochs, "infer_epochs")
    if not texts:
        return np.empty((0, config.vector_size), dtype=np.float32)
    if len(texts) < INFER_CACHE_MIN:
        return _inferred(config, texts, workers, infer_epochs, progress)
    content = storage.content_digest(pd.DataFrame({"text": texts}), ["text"])[:storage.KEY_CHARS]
    path = (settings.data_dir() / "models"
            / f"inferred_{config.key()}_{infer_epochs or config.epochs}_{content}.npy")
    shape = (len(texts), config.vector_size)
    return storage.cached(path, lambda: _inferred(config, texts, workers, infer_epochs, progress),
                          storage.write_array, lambda stored: storage.read_array(stored, shape))


def _inferred(config: Doc2VecConfig, texts: list[str], workers: int | None, infer_epochs: int | None,
              progress: bool) -> np.ndarray:
    model = train(config, workers, progress)
    model.random = np.random.RandomState(config.seed)
    return np.vstack([
        model.infer_vector(tokenize(text), epochs=infer_epochs or config.epochs)
        for text in tqdm(texts, desc=f"infer {config.name}", disable=not progress, leave=False)
    ]).reshape(len(texts), config.vector_size)


def imdb_vectors(config: Doc2VecConfig, progress: bool = True) -> tuple[pd.DataFrame, np.ndarray]:
    """The trained vectors of the IMDB reviews in ``config``'s training corpus.

    The model's document vectors are cached beside it (``document_vectors_path``): reading
    them is much quicker than loading the model, which rebuilds gensim's sampling table.

    Returns
    -------
    (DataFrame, ndarray)
        One row per IMDB review the model trained on, in training order: doc_id, split
        (train/test/unsup), label (None for unsup), rating (0 for unsup), movie_id; and their
        vectors, row for row.
    """
    _check_config(config)
    _, ids = corpus_file(config, progress)
    trained = _document_vectors(config, len(ids), progress)
    imdb = pd.concat([data.load_imdb(s).assign(split=s) for s in data.IMDB_SPLITS], ignore_index=True)
    lines = pd.DataFrame({"doc_id": ids, "line": np.arange(len(ids))})
    table = lines.merge(imdb[["doc_id", "split", "label", "rating", "movie_id"]], on="doc_id")
    return table.drop(columns="line"), trained[table.line.to_numpy()]


def _document_vectors(config: Doc2VecConfig, documents: int, progress: bool) -> np.ndarray:
    """``config``'s model's document vectors: from their cache, named by the checksum of the
    model stored, or read from the model and cached only if that checksum was the same before
    and after it was loaded (a model stored meanwhile by another process is not named so)."""
    model = model_path(config)
    stamp = storage.recorded_digest(model)
    if stamp is not None:
        found = storage.load(document_vectors_path(config, stamp),
                             lambda stored: storage.read_array(stored, (documents, config.vector_size)))
        if found is not None:
            return found
    vectors = train(config, progress=progress).dv.vectors
    loaded = storage.recorded_digest(model)  # a first training has just stored it
    if loaded is not None and stamp in (None, loaded):
        storage.store(document_vectors_path(config, loaded), lambda tmp: storage.write_array(vectors, tmp))
    return vectors


def document_vectors_path(config: Doc2VecConfig, model_digest: str) -> Path:
    """Where ``imdb_vectors`` caches the document vectors of ``config``'s model, line by line
    of its training corpus.

    Beside the model, named by its key and by the checksum of the model file they were read
    from, so that a model trained again (with more than one worker its vectors differ) is
    read again. The files of models replaced stay until deleted (as every cache's do).

    Parameters
    ----------
    config : Doc2VecConfig
    model_digest : str
        The sha256 of the model file (``storage.recorded_digest(model_path(config))``).

    Returns
    -------
    Path
        ``models/d2v_<key>_documents_<first 16 hex digits of model_digest>.npy``.
    """
    model = model_path(config)
    return model.with_name(f"{model.stem}_documents_{model_digest[:storage.KEY_CHARS]}.npy")


@dataclass(frozen=True)
class Doc2VecSystem:
    """A linear SVM on Doc2Vec vectors (one model's, or several models' concatenated).

    Used with ``helpers.evaluation.cross_validate``: the vectors come from models trained
    without the reviews (unless transductive); in each fold the features are standardised
    with the training folds' means and deviations, and C is chosen by inner CV on the
    training folds.
    """

    configs: tuple[Doc2VecConfig, ...]
    infer_epochs: int | None = None
    Cs: tuple[float, ...] = C_GRID
    inner_folds: int = 3
    workers: int | None = None

    def key(self) -> str:
        """Hash of every model's key and the SVM's settings: the cached predictions' name."""
        return _hash({"configs": [c.key() for c in self.configs], "infer": self.infer_epochs,
                      "Cs": self.Cs, "inner": self.inner_folds, "model": "svm"})

    def represent(self, reviews: pd.DataFrame) -> np.ndarray:
        """Document vectors: cached for the 2,000 reviews; inferred for any other texts.

        For a table that starts with the 2,000 reviews (in order) and continues with new
        texts, the two parts are joined: what ``helpers.evaluation.fit_predict`` passes.
        """
        ours = data.load_movie_reviews().doc_id.to_numpy()
        known = len(reviews) >= len(ours) and np.array_equal(reviews.doc_id.to_numpy()[:len(ours)], ours)
        parts = []
        for config in self.configs:
            vectors = review_vectors(config, self.workers, self.infer_epochs) if known else np.empty(
                (0, config.vector_size))
            rest = reviews.text.iloc[len(vectors):]
            if len(rest):
                vectors = np.vstack([vectors, infer_vectors(config, rest, self.workers, self.infer_epochs)])
            parts.append(vectors)
        return np.hstack(parts)

    def features(self, matrix: np.ndarray, train: np.ndarray,
                 test: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Training and test vectors of one split, standardised with the training rows' statistics."""
        scaler = StandardScaler().fit(matrix[train])
        return scaler.transform(matrix[train]), scaler.transform(matrix[test])

    def fit_tuned(self, X: np.ndarray, y: np.ndarray) -> tuple[Classifier, float]:
        """A LinearSVC fitted on (X, y) with C chosen by inner CV on them, and that C."""
        return fit_svm(X, y, self.Cs, self.inner_folds)


#: PV-DM's training time over PV-DBOW's at the same settings (notebook 04's full-profile
#: table: 791 s against 406 s), for ordering models by their work.
PV_DM_WORK = 2


def training_work(config: Doc2VecConfig) -> int:
    """A model's training work, in relative units: only its order matters (``longest_first``).

    Documents (all of IMDB when not sampled) times epochs times dimensions; ``window`` times
    more when PV-DBOW also trains word vectors, ``PV_DM_WORK`` times more for PV-DM.

    Parameters
    ----------
    config : Doc2VecConfig

    Returns
    -------
    int

    Raises
    ------
    InputError
        ``config`` is not a Doc2VecConfig.
    """
    _check_config(config)
    documents = config.n_docs or sum(data.IMDB_ROWS.values())
    factor = PV_DM_WORK if config.dm else (config.window if config.dbow_words else 1)
    return documents * config.epochs * config.vector_size * factor


def longest_first(configs: Iterable[Doc2VecConfig]) -> list[Doc2VecConfig]:
    """Models ordered by ``training_work``, most first (ties keep their order).

    Models training side by side finish soonest when the longest starts first: the short
    ones then fill the other cores instead of leaving one model running alone at the end.

    Parameters
    ----------
    configs : iterable of Doc2VecConfig

    Returns
    -------
    list of Doc2VecConfig

    Raises
    ------
    InputError
        An item is not a Doc2VecConfig.
    """
    return sorted(configs, key=training_work, reverse=True)


def prepare(configs, infer_epochs: int | None = None, profile: str | None = None,
            progress: bool = True) -> None:
    """Train and infer (into the cache) every config not cached yet, the longest first.

    In the quick profile each model is single-threaded, so independent models train
    side by side, one process per core (each still bit-for-bit reproducible). In the full
    profile each model already uses every core, so they train one after another.
    """
    missing = longest_first(dict.fromkeys(
        c for c in configs if not storage.is_stored(_vector_path(c, infer_epochs))))
    if not missing:
        return
    workers = workers_for(profile)
    n_jobs = 1 if workers > 1 else min(len(missing), os.cpu_count() or 1)
    jobs = (delayed(review_vectors)(c, workers, infer_epochs, False) for c in missing)
    list(tqdm(Parallel(n_jobs=n_jobs, return_as="generator")(jobs), total=len(missing),
              desc="train and infer", unit="model", disable=not progress))
