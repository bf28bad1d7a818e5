"""Measure how far checked numbers move under other BLAS kernels, and record it.

A checked number may only be compared within a tolerance that was measured. This module
reruns the solution notebooks on one machine under several floating-point kernel settings
(``OPENBLAS_CORETYPE`` × ``OPENBLAS_NUM_THREADS``), each with a fresh data folder so that
models and caches are recomputed, and records for every checked cell how far its numbers
moved, in units of their last printed digit. The table is kept in the repository
(``solutions/tolerances.csv``); a test holds every declared tolerance to at least
``SAFETY`` times the spread recorded there.

Run it as ``python -m helpers.course.notebook.tolerances OUT_DIR [NN ...]``; ``--jobs 2`` runs
two settings at once, which nearly halves it, since most of the work is single-threaded.
Measured on two cores with ``--jobs 2``: 00-03, 09 and 10 took 77 minutes for the six
settings; 04, 05, 06 and 08 took 80 minutes for a pair of settings, other work running (each
setting trains 04's thirteen Doc2Vec models again). ``--table-only`` rebuilds the table
from runs already in ``OUT_DIR``; the same command run again goes on where a stopped run
left off, since each setting's data folder keeps what it computed. A run of some notebooks
keeps the other notebooks' rows.
"""

from __future__ import annotations

import argparse
import hashlib
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

import nbformat
import pandas as pd
from nbformat import NotebookNode

from helpers.course.config import SOLUTIONS_DIR, notebooks_in, reference_environ
from helpers.course.notebook.cells import is_checked
from helpers.course.notebook.compare import is_exact, tokens, tolerance_of, unit
from helpers.course.notebook.release import render
from helpers.errors import KitError
from helpers.files import atomic_write

#: Core types × thread counts. ``None`` (labelled native) leaves ``OPENBLAS_CORETYPE`` unset, as a
#: student's machine runs the kit: its processes then choose the reference kernels where the CPU
#: runs them (``settings.reference_blas``: Haswell on any CPU with AVX2 and FMA, AVX-512 ones too),
#: else OpenBLAS picks this CPU's own. So it measures what the kit runs here, not AVX-512 kernels,
#: which the kit never runs.
SETTINGS = ((None, 1), (None, 2), ("Prescott", 1), ("Prescott", 2), ("Sandybridge", 1),
            ("Sandybridge", 2))
#: A declared tolerance must be at least this many times the spread measured.
SAFETY = 3
TABLE = SOLUTIONS_DIR / "tolerances.csv"
#: Hex digits kept of a reference output's sha256 (``reference_digest``).
REFERENCE_DIGITS = 16
COLUMNS = ["notebook", "cell_id", "cell", "check", "numbers", "spread", "tolerance", "settings", "reference"]


@dataclass(frozen=True)
class Setting:
    """One BLAS kernel setting: a core type (None: what the kit runs on this CPU) and a thread count."""

    core: str | None
    threads: int

    @property
    def label(self) -> str:
        return f"{self.core or 'native'}-{self.threads}"

    def environ(self, data_dir: Path) -> dict[str, str]:
        """The environment a run under this setting gets (fresh data folder, no offline source)."""
        env = reference_environ()
        env.pop("OPENBLAS_CORETYPE", None)
        env.pop("KIT_DATA_SOURCE", None)
        env.update({"OPENBLAS_NUM_THREADS": str(self.threads), "KIT_DATA_DIR": str(data_dir)})
        if self.core:
            env["OPENBLAS_CORETYPE"] = self.core
        return env


#: What a run may take from a verified data folder: the corpora and the parsed IMDB tables,
#: which no floating-point kernel touches. Models, vectors and results are always recomputed.
SEEDED = ("aclImdb", "aclImdb_v1.tar.gz", "nltk_data", "cache")


def seed_data(seed: Path, data_dir: Path) -> None:
    """Hard-link the kernel-independent part of a verified data folder into a fresh one."""
    data_dir.mkdir(parents=True, exist_ok=True)
    for name in SEEDED:
        if (seed / name).exists() and not (data_dir / name).exists():
            subprocess.run(["cp", "-al", str(seed / name), str(data_dir / name)], check=True)


def run_setting(setting: Setting, out_dir: Path, numbers: list[str] | None, source: Path,
                seed: Path | None = None) -> Path:
    """Fetch into a fresh data folder and execute the solutions under one setting.

    Parameters
    ----------
    seed : Path, optional
        A verified data folder whose corpora and parsed IMDB tables are linked in first
        (``SEEDED``), so that the fetch only checks them.

    Returns
    -------
    Path
        The folder holding the executed notebooks.
    """
    folder = out_dir / setting.label
    env = setting.environ(folder / "data")
    if seed is not None:
        seed_data(seed, folder / "data")
    subprocess.run([sys.executable, "-m", "helpers.cli", "fetch", "--source", str(source)],
                   env=env, check=True, capture_output=True)
    subprocess.run([sys.executable, "-m", "helpers.cli", "run", "--solutions", *(numbers or []),
                    "--out", str(folder / "executed")], env=env, check=False)
    return folder / "executed"


def checked_texts(nb: NotebookNode) -> dict[str, tuple[int, str, str]]:
    """Map each checked cell's id to (its position among all cells, title line, stdout text)."""
    found = {}
    for position, cell in enumerate(nb.cells, start=1):
        if cell.cell_type == "code" and is_checked(cell):
            text = "".join(o.get("text", "") for o in cell.get("outputs", [])
                           if o.get("output_type") == "stream" and o.get("name") == "stdout")
            text += "".join(o.get("data", {}).get("text/plain", "") for o in cell.get("outputs", [])
                            if o.get("output_type") == "execute_result")
            title = cell.source.split("\n", 2)[1] if "\n" in cell.source else ""
            found[cell.id] = (position, title.strip()[:60], text)
    return found


def spread(texts: list[str]) -> int | None:
    """Largest move of any decimal number across ``texts``, in its last-digit units.

    Returns
    -------
    int or None
        0 when nothing moved; None when the texts differ in anything but decimal numbers
        (such a check cannot be made stable by a tolerance).
    """
    lines = [[tokens(line) for line in text.splitlines()] for text in texts]
    if len({len(t) for t in lines}) > 1:
        return None
    widest = 0
    for line_tokens in zip(*lines, strict=True):
        if len({len(t) for t in line_tokens}) > 1:
            return None
        for column in zip(*line_tokens, strict=True):
            first = column[0]
            if any(t.kind != first.kind or t.glued != first.glued for t in column):
                return None
            if first.kind == "number" and not is_exact(first.text):
                values = [Decimal(t.text) for t in column]
                widest = max(widest, int((max(values) - min(values)) / unit(first.text)))
            elif any(t.text != first.text for t in column):
                return None
    return widest


def table(runs: dict[str, Path], solutions_dir: Path = SOLUTIONS_DIR) -> pd.DataFrame:
    """Compare every setting's executed notebooks with the references; one row per checked cell.

    Parameters
    ----------
    runs : dict
        Setting label → folder of executed notebooks.
    solutions_dir : Path
        The reference notebooks.

    Returns
    -------
    DataFrame
        Columns ``COLUMNS``; ``spread`` is -1 where the text itself moved.
    """
    rows = []
    for path in notebooks_in(solutions_dir):
        executed = {label: folder / path.name for label, folder in runs.items()
                    if (folder / path.name).is_file()}
        if not executed:
            continue
        reference = nbformat.read(path, as_version=4)
        cells = {c.id: c for c in reference.cells}
        outputs = {label: checked_texts(nbformat.read(p, as_version=4)) for label, p in executed.items()}
        for cell_id, (position, title, text) in checked_texts(reference).items():
            texts = [text] + [found[cell_id][2] for found in outputs.values() if cell_id in found]
            moved = spread(texts)
            decimals = sum(t.kind == "number" and not is_exact(t.text)
                           for line in text.splitlines() for t in tokens(line))
            rows.append({"notebook": path.stem, "cell_id": cell_id, "cell": position, "check": title,
                         "numbers": decimals, "spread": -1 if moved is None else moved,
                         "tolerance": tolerance_of(cells[cell_id]),
                         "settings": " ".join(sorted(executed)), "reference": reference_digest(text)})
    return pd.DataFrame(rows, columns=COLUMNS)


def reference_digest(text: str) -> str:
    """The digest of a checked cell's reference output (``checked_texts``) that its spread was
    measured against: a reference written again since (``kit references``) no longer matches,
    and its spread must be measured again."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:REFERENCE_DIGITS]


def read_table(table_path: Path = TABLE) -> pd.DataFrame:
    """The recorded table (``COLUMNS``), as written: a cell not measured yet has no spread
    (``<NA>``), no settings and no reference (empty strings).

    Raises
    ------
    FileNotFoundError
        If there is no table.
    """
    types = {"cell_id": str, "spread": "Int64", "settings": str, "reference": str}
    return pd.read_csv(table_path, dtype=types, keep_default_na=False, na_values={"spread": [""]})


def stale(table_path: Path = TABLE, solutions_dir: Path = SOLUTIONS_DIR) -> list[str]:
    """The notebooks with a checked cell whose reference output is not the one its spread was
    measured against (``reference``), or that has no row or a row not measured: measure them
    again.

    Raises
    ------
    KitError
        If the table is missing or has no ``reference`` column (measured before it was kept).
    """
    try:
        measured = read_table(table_path)
    except FileNotFoundError:
        raise KitError(f"{table_path} is missing: measure the tolerances (python -m "
                       "helpers.course.notebook.tolerances OUT_DIR).") from None
    if "reference" not in measured:
        raise KitError(f"{table_path} has no reference column: measure the tolerances again.")
    keys = zip(measured.notebook, measured.cell_id, strict=True)
    recorded = dict(zip(keys, measured.reference, strict=True))
    found: set[str] = set()
    for path in notebooks_in(solutions_dir):
        for cell_id, (_, _, text) in checked_texts(nbformat.read(path, as_version=4)).items():
            if recorded.get((path.stem, cell_id)) != reference_digest(text):
                found.add(path.stem)
    return sorted(found)


def declare(measured: pd.DataFrame, solutions_dir: Path = SOLUTIONS_DIR) -> list[str]:
    """Raise each checked cell's tolerance to ``SAFETY`` × its measured spread, where it is lower.

    Only the ``kit.tolerance`` metadata of those cells changes; a larger tolerance already
    declared is kept. Returns one line per change.

    Raises
    ------
    KitError
        If a cell's text (not only its decimals) moved: no tolerance can make it stable.
    """
    unstable = measured[measured.spread < 0]
    if not unstable.empty:
        where = ", ".join(f"{r.notebook} cell {r.cell}" for r in unstable.itertuples())
        raise KitError(f"Text, not only decimals, moved in {where}: check something stable there.")
    changes = []
    for notebook, rows in measured[measured.spread > 0].groupby("notebook"):
        path = solutions_dir / f"{notebook}.ipynb"
        nb = nbformat.read(path, as_version=4)
        cells = {c.id: c for c in nb.cells}
        for row in rows.itertuples():
            needed = SAFETY * int(row.spread)
            cell = cells[row.cell_id]
            if tolerance_of(cell) < needed:
                cell.metadata.setdefault("kit", {})["tolerance"] = needed
                changes.append(f"{notebook} cell {row.cell}: tolerance {needed} (spread {row.spread})")
        # mypy cannot infer a lambda with a default argument (python/mypy#15459)
        atomic_write(path, lambda tmp, nb=nb: tmp.write_text(render(nb), encoding="utf-8"))  # type: ignore[misc]
    return changes


def with_other_notebooks(measured: pd.DataFrame, table_path: Path = TABLE) -> pd.DataFrame:
    """The new rows, plus the recorded rows of every notebook that was not run this time."""
    if not table_path.is_file():
        return measured
    recorded = read_table(table_path)
    kept = recorded[~recorded.notebook.isin(set(measured.notebook))]
    return pd.concat([kept, measured], ignore_index=True).sort_values(["notebook", "cell"], kind="stable")


def main(argv: list[str] | None = None) -> int:
    from helpers.course.arguments import positive_int

    parser = argparse.ArgumentParser(prog="python -m helpers.course.notebook.tolerances", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path, help="folder for the runs (one sub-folder per setting)")
    parser.add_argument("numbers", nargs="*", metavar="NN", help="only these notebooks")
    parser.add_argument("--source", type=Path, default=None,
                        help="data to fetch from (default: KIT_DATA_SOURCE, else the verified data folder)")
    parser.add_argument("--table-only", action="store_true", help="only rebuild the table from OUT")
    parser.add_argument("--seed", type=Path, default=None,
                        help="a verified data folder to link the corpora and IMDB tables from (faster)")
    parser.add_argument("--jobs", type=positive_int, default=1, help="settings run at once (default 1)")
    parser.add_argument("--declare", action="store_true",
                        help=f"raise the solutions' tolerances to {SAFETY} x the measured spread")
    args = parser.parse_args(argv)
    settings = [Setting(core, threads) for core, threads in SETTINGS]
    if not args.table_only:
        from helpers import settings as kit_settings

        source = args.source or kit_settings.data_source() or kit_settings.data_dir()
        # Settings are independent runs in their own folders; most of their work is one thread.
        with ThreadPoolExecutor(args.jobs) as pool:
            list(pool.map(lambda setting: run_setting(setting, args.out, args.numbers, source, args.seed),
                          settings))
    runs = {s.label: args.out / s.label / "executed" for s in settings
            if (args.out / s.label / "executed").is_dir()}
    result = table(runs)
    if args.declare:
        for change in declare(result):
            print(change, file=sys.stderr)
        result = table(runs)
    result = with_other_notebooks(result)
    result.to_csv(TABLE, index=False)
    print(result.to_string(index=False))
    print(f"\nwritten to {TABLE}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
