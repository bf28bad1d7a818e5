"""Export vectors for the TensorFlow Embedding Projector (projector.tensorflow.org) and TensorBoard.

The projector reads two TSV files: vectors (tab-separated floats, one row per point, no
header) and metadata (one label per line without a header when there is a single column;
with several columns the first line names them). It skips blank lines, so an empty label
would shift every later row: empty values are written as ``(none)``. Tabs, newlines and
backslashes inside labels are escaped (``\\t``, ``\\n``, ``\\r``, ``\\\\``), which keeps one
row per point; ``read_projector`` undoes the escaping.

``projector_config.pbtxt`` in the same folder lists every exported embedding, so
``tensorboard --logdir DIR`` shows them too (TensorBoard is optional:
``pip install tensorboard``).

Your files are never overwritten (``helpers.owned``): an export whose TSV files exist and are
not the kit's unchanged own is refused before anything is written, and a config you wrote or
edited is kept, the kit's going beside it under a stamped name.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

from helpers import data, embeddings, settings
from helpers.errors import InputError
from helpers.owned import refuse_changed, write_owned
from helpers.text import snippet

EMPTY = "(none)"
CONFIG = "projector_config.pbtxt"
FIRST_WORDS = 12
_ESCAPES = {"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"}
_UNESCAPES = {v: k for k, v in _ESCAPES.items()}
_NAME = re.compile(r"^[A-Za-z0-9_.-]+$")
NUMBER_KINDS = "iuf"  # numpy's signed, unsigned and floating dtypes
REFUSAL_HINT = "Export under another name or into another folder, or move it away."


def escape(value) -> str:
    """One metadata cell as the projector needs it: escaped, never empty."""
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return EMPTY
    text = str(value)
    return "".join(_ESCAPES.get(c, c) for c in text) if text else EMPTY


def unescape(cell: str) -> str:
    """Undo ``escape`` (``(none)`` stays as it is)."""
    return re.sub(r"\\[\\tnr]", lambda m: _UNESCAPES[m.group()], cell)


def export_projector(vectors, metadata, out_dir: str | Path, name: str,
                     config: bool = True) -> dict[str, Path]:
    """Write ``<name>_vectors.tsv``, ``<name>_metadata.tsv`` and the TensorBoard config.

    Parameters
    ----------
    vectors : array-like of shape (n, d), n >= 1, d >= 2
        Finite numbers, one row per point.
    metadata : DataFrame, Series or list
        One entry (or row) per point. A DataFrame with several columns gets a header row;
        a single column (Series, list or one-column DataFrame) is written without one.
    out_dir : str or Path
        Created if needed. The kit's own earlier export of the same ``name`` is replaced;
        nothing else is touched except ``projector_config.pbtxt`` (see ``write_config``).
    name : str
        Letters, digits, ``_``, ``.``, ``-``.
    config : bool
        Also (re)write the config; ``False`` when several exports are written in a row.

    Returns
    -------
    dict
        Paths of ``vectors``, ``metadata`` and (with ``config``) ``config``: the stamped file
        beside ``projector_config.pbtxt`` when that one is yours.

    Raises
    ------
    InputError
        Vectors that are not a non-empty 2-D table of finite numbers with at least 2 columns,
        metadata of another length, or a bad name; nothing is written.
    KitError
        If ``<name>_vectors.tsv`` or ``<name>_metadata.tsv`` exists and is not the kit's
        unchanged own export; nothing is written.
    """
    if not (isinstance(name, str) and _NAME.match(name)):
        raise InputError(f"Projector name {name!r}: use letters, digits, _, . or - only.")
    vectors = _checked_vectors(vectors)
    table = metadata.to_frame() if isinstance(metadata, pd.Series) else pd.DataFrame(metadata)
    if len(table) != len(vectors):
        raise InputError(f"{len(vectors)} vectors but {len(table)} metadata rows: give one row per vector.")
    paths = _tsv_paths(out_dir, name)
    refuse_changed(paths.values(), REFUSAL_HINT)
    lines = [[escape(v) for v in row] for row in table.itertuples(index=False)]
    if table.shape[1] > 1:
        lines.insert(0, [escape(c) for c in table.columns])
    write_owned(paths["vectors"], lambda tmp: np.savetxt(tmp, vectors, delimiter="\t", fmt="%.6g"))
    write_owned(paths["metadata"], "".join("\t".join(cells) + "\n" for cells in lines))
    if config:
        paths["config"] = write_config(out_dir)
    return paths


def _tsv_paths(out_dir: str | Path, name: str) -> dict[str, Path]:
    return {kind: Path(out_dir) / f"{name}_{kind}.tsv" for kind in ("vectors", "metadata")}


def _checked_vectors(vectors) -> np.ndarray:
    """``vectors`` as a float array of shape (n >= 1, d >= 2) of finite numbers.

    Raises
    ------
    InputError
        Ragged rows, values that are not numbers (strings too), a wrong shape, NaN or infinity.
    """
    try:
        found = np.asarray(vectors)
    except ValueError:  # numpy refuses rows of different lengths
        raise InputError("vectors have rows of different lengths: give d numbers for every point.") from None
    if found.dtype.kind not in NUMBER_KINDS:
        what = "strings" if found.dtype.kind in "US" else f"values of type {found.dtype}"
        raise InputError(f"vectors must hold numbers, not {what}: convert them with float() first.")
    if found.ndim != 2 or found.shape[0] < 1 or found.shape[1] < 2:
        raise InputError("vectors must be a 2-D array with at least 1 row and 2 columns, "
                         f"not shape {found.shape}.")
    if not np.isfinite(found).all():
        raise InputError("vectors contain NaN or infinite values; the projector cannot show them.")
    return found.astype(float)


def write_config(out_dir: str | Path) -> Path:
    """(Re)write ``projector_config.pbtxt`` listing every ``*_vectors.tsv`` in ``out_dir``.

    Returns
    -------
    Path
        The config; or, when ``projector_config.pbtxt`` is yours (written or edited by hand),
        the stamped file beside it that holds the kit's: yours is kept as it is.
    """
    out_dir = Path(out_dir)
    blocks = []
    for vectors in sorted(out_dir.glob("*_vectors.tsv")):
        name = vectors.name[: -len("_vectors.tsv")]
        block = f'embeddings {{\n  tensor_name: "{name}"\n  tensor_path: "{vectors.name}"\n'
        if (out_dir / f"{name}_metadata.tsv").is_file():
            block += f'  metadata_path: "{name}_metadata.tsv"\n'
        blocks.append(block + "}\n")
    return write_owned(out_dir / CONFIG, "".join(blocks))


def read_projector(out_dir: str | Path, name: str) -> tuple[np.ndarray, pd.DataFrame]:
    """Read an export back: the vectors, and the metadata (unescaped; one column is ``label``)."""
    out_dir = Path(out_dir)
    vectors = np.loadtxt(out_dir / f"{name}_vectors.tsv", delimiter="\t", ndmin=2)
    lines = (out_dir / f"{name}_metadata.tsv").read_text(encoding="utf-8").split("\n")[:-1]
    rows = [[unescape(c) for c in line.split("\t")] for line in lines]
    if "\t" in lines[0]:
        return vectors, pd.DataFrame(rows[1:], columns=rows[0])
    return vectors, pd.DataFrame({"label": [r[0] for r in rows]})


def export_kit_embeddings(config, n_docs: int = 2000, n_words: int = 5000, out_dir: str | Path | None = None,
                          seed: int = 0, progress: bool = True) -> dict[str, dict[str, Path]]:
    """Export a Doc2Vec model's document and word vectors (what ``kit export-projector`` does).

    ``documents``: the 2,000 Pang & Lee reviews (vectors inferred) plus ``n_docs`` IMDB reviews
    sampled (seeded) from the model's training corpus (their trained vectors); metadata id,
    source, label, rating, movie_id, first words. ``words``: the ``n_words`` most frequent
    words of the model's vocabulary, if it trained word vectors (dm=1 or dbow_words=1);
    metadata word, frequency, lexicon (pos/neg/none).

    Returns
    -------
    dict
        ``{"documents": paths, "words": paths}`` (``words`` missing without word vectors).
    """
    out_dir = Path(out_dir) if out_dir is not None else settings.data_dir() / "projector"
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", config.name)
    # refused before the model is trained and its vectors inferred, not after the first export
    refuse_changed([*_tsv_paths(out_dir, f"{slug}_documents").values(),
                    *_tsv_paths(out_dir, f"{slug}_words").values()], REFUSAL_HINT)
    reviews = data.load_movie_reviews()
    ours = embeddings.review_vectors(config, progress=progress)
    table, imdb = embeddings.imdb_vectors(config, progress)
    rng = np.random.default_rng(seed)
    pick = np.sort(rng.choice(len(table), min(n_docs, len(table)), replace=False))
    picked_texts = embeddings.texts_by_id()[table.doc_id.iloc[pick]]
    documents = pd.DataFrame({
        "id": [*reviews.doc_id, *table.doc_id.iloc[pick]],
        "source": ["pang_lee"] * len(reviews) + ["imdb_" + s for s in table.split.iloc[pick]],
        "label": [*reviews.label, *table.label.iloc[pick]],
        "rating": [None] * len(reviews) + [r or None for r in table.rating.iloc[pick]],
        "movie_id": [None] * len(reviews) + list(table.movie_id.iloc[pick]),
        "first_words": [snippet(t, FIRST_WORDS) for t in [*reviews.text, *picked_texts]],
    })
    exported = {"documents": export_projector(np.vstack([ours, imdb[pick]]), documents, out_dir,
                                              f"{slug}_documents", config=False)}
    model = embeddings.train(config, progress=progress)
    if model.dm or model.dbow_words:
        lexicon = data.load_opinion_lexicon()
        words = model.wv.index_to_key[:n_words]
        metadata = pd.DataFrame({
            "word": words, "frequency": [model.wv.get_vecattr(w, "count") for w in words],
            "lexicon": ["pos" if w in lexicon["pos"] else "neg" if w in lexicon["neg"] else "none"
                        for w in words]})
        exported["words"] = export_projector(model.wv[words], metadata, out_dir,
                                             f"{slug}_words", config=False)
    config_path = write_config(out_dir)
    for paths in exported.values():
        paths["config"] = config_path
    return exported
