"""What the practical itself costs: every solution notebook run cold, then warm, under a memory cap.

1. *Cold*: a fresh, empty data folder (``KIT_DATA_DIR``), filled by ``kit fetch`` from a
   local copy of the archives (``--source``, default ``KIT_DATA_SOURCE``; the fetch is timed
   as its own row), then the notebooks in order with no cache of any kind (no IMDB tables,
   cross-validation results, Doc2Vec corpora, models, vectors or overlaps): what a student's
   first pass costs, each notebook building what later ones reuse.
2. *Warm*: the same notebooks again on the caches the cold pass left.

Each notebook runs through the kit's own runner (``helpers.course.notebook.runner.run_notebook``, what
``kit run --solutions`` does: a fresh kernel, the reference environment, the executed copy
saved under ``OUT/executed/<phase>/``) in a process of its own, which is put into a new memory
control group capped at ``--memory-gb`` (2 GB: Binder's limit) before it starts, so the runner,
the kernel and everything they start share a real cap, as on Binder: a notebook that needs
more is killed, and its row says so. cgroup v2 (``memory.max``) is used where the machine
allows it, else cgroup v1 (``memory.limit_in_bytes``, a child of this process's own group,
as on a host whose memory controller is still mounted as v1); where neither is, the
notebooks run uncapped and the table says ``cap=none`` (the measured peaks still tell
whether 2 GB would do).

Per notebook: wall time; CPU time (user + system of every process of the run: the control
group's own count where cgroups allow, else the runner and kernel as reaped); peak memory,
twice: what the kernel and its children hold as the kit's runner samples it (every 0.2 s,
each page once: ``helpers.course.memory``), and the
control group's peak charge (resident memory and page cache, what the cap limits); and the
number of times the cap was hit. Written to ``OUT/notebooks.csv`` and ``OUT/notebooks.md``.

    python benchmarks/bench_notebooks.py [NN ...] [--source DIR] [--out DIR] [--memory-gb 2]

Notebook numbers default to all solutions. The budget: the whole practical under 20 minutes
cold on 2 cores, every notebook under 2 GB.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import pandas as pd
import psutil

ROOT = Path(__file__).resolve().parents[1]
CGROUP_V1 = Path("/sys/fs/cgroup/memory")
CGROUP_V1_CPU = Path("/sys/fs/cgroup/cpuacct")
CGROUP_V2 = Path("/sys/fs/cgroup")
#: Per cgroup kind, the file that limits swap (on v1: memory and swap together).
SWAP_LIMIT = {"v1": "memory.memsw.limit_in_bytes", "v2": "memory.swap.max"}
RUN_ONE = """
import json, sys
from pathlib import Path
from helpers.course.notebook import runner
print(json.dumps(runner.run_notebook(Path(sys.argv[1]), Path(sys.argv[2]))))
"""


def own_cgroup(controller: str) -> str | None:
    """This process's cgroup path for a v1 controller (``memory``), or for v2 (``""``)."""
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        if controller in controllers.split(",") or (controller == "" and controllers == ""):
            return path
    return None


@dataclass
class Cap:
    """A memory control group (and, on cgroup v1, a CPU-accounting one) for one notebook run."""

    kind: str  # "v1", "v2" or "none"
    limit_bytes: int
    memory: Path | None = None
    cpu: Path | None = None

    @classmethod
    def create(cls, name: str, limit_bytes: int) -> Cap:
        """cgroup v2 if this machine lets us create it, else v1, else an uncapped ``none``."""
        for make in (cls._v2, cls._v1):
            try:
                return make(name, limit_bytes)
            except OSError:
                continue
        return cls("none", limit_bytes)

    @classmethod
    def _v1(cls, name: str, limit_bytes: int) -> Cap:
        if own_cgroup("memory") is None or not CGROUP_V1.is_dir():
            raise OSError("no cgroup v1 memory controller")
        memory = CGROUP_V1 / own_cgroup("memory").lstrip("/") / name
        memory.mkdir()
        try:
            (memory / "memory.limit_in_bytes").write_text(str(limit_bytes))
            _no_swap(memory / SWAP_LIMIT["v1"], str(limit_bytes))  # memory + swap
        except OSError:
            memory.rmdir()
            raise
        cpu = None
        if own_cgroup("cpuacct") is not None and CGROUP_V1_CPU.is_dir():
            cpu = CGROUP_V1_CPU / own_cgroup("cpuacct").lstrip("/") / name
            try:
                cpu.mkdir()
            except OSError:
                cpu = None
        return cls("v1", limit_bytes, memory, cpu)

    @classmethod
    def _v2(cls, name: str, limit_bytes: int) -> Cap:
        if not (CGROUP_V2 / "cgroup.controllers").is_file() or own_cgroup("") is None:
            raise OSError("not cgroup v2")
        group = CGROUP_V2 / own_cgroup("").lstrip("/") / name
        group.mkdir()
        try:
            (group / "memory.max").write_text(str(limit_bytes))
            _no_swap(group / SWAP_LIMIT["v2"], "0")
        except OSError:
            group.rmdir()
            raise
        return cls("v2", limit_bytes, group, group)

    def enter(self) -> None:
        """Put the calling process into the groups (run in the child before it starts the runner)."""
        for group in {self.memory, self.cpu} - {None}:
            (group / "cgroup.procs").write_text(str(os.getpid()))

    def holds_swap(self) -> bool:
        """Whether a run over the cap dies rather than swaps: no swap here, or swap limited too."""
        return psutil.swap_memory().total == 0 or (self.kind in SWAP_LIMIT
                                                    and (self.memory / SWAP_LIMIT[self.kind]).is_file())

    def cpu_seconds(self) -> float | None:
        if self.kind == "v1" and self.cpu is not None:
            return int((self.cpu / "cpuacct.usage").read_text()) / 1e9
        if self.kind == "v2":
            usage = dict(line.split() for line in (self.cpu / "cpu.stat").read_text().splitlines())
            return int(usage["usage_usec"]) / 1e6
        return None

    def peak_mb(self) -> float | None:
        name = {"v1": "memory.max_usage_in_bytes", "v2": "memory.peak"}.get(self.kind)
        path = self.memory / name if name else None
        return int(path.read_text()) / 2**20 if path is not None and path.is_file() else None

    def limit_hits(self) -> int | None:
        if self.kind == "v1":  # with a memory + swap limit, the kernel may count there instead
            counts = (self.memory / "memory.failcnt", self.memory / "memory.memsw.failcnt")
            return max(int(count.read_text()) for count in counts if count.is_file())
        if self.kind == "v2":
            events = dict(line.split() for line in (self.memory / "memory.events").read_text().splitlines())
            return int(events.get("max", 0))
        return None

    def oom_kills(self) -> int | None:
        path = {"v1": "memory.oom_control", "v2": "memory.events"}.get(self.kind)
        if path is None:
            return None
        fields = dict(line.split() for line in (self.memory / path).read_text().splitlines())
        return int(fields.get("oom_kill", 0))

    def remove(self) -> None:
        """End what the run left behind in the group (its own descendants only), then remove it."""
        for group in {self.memory, self.cpu} - {None}:
            for pid in (group / "cgroup.procs").read_text().split():
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except ProcessLookupError:
                    pass
            for _ in range(50):  # the kernel takes a moment to empty the group
                try:
                    group.rmdir()
                    break
                except OSError:
                    time.sleep(0.1)
            else:
                print(f"could not remove {group}", file=sys.stderr)


def _no_swap(control: Path, value: str) -> None:
    """On a machine with swap, keep a capped run from swapping past its cap (Binder has none).

    Only there: on cgroup v1 a memory + swap limit also stops ``memory.failcnt`` counting.
    """
    if psutil.swap_memory().total > 0 and control.is_file():
        control.write_text(value)


def environment(data_dir: Path, source: Path) -> dict:
    env = {**os.environ, "KIT_DATA_DIR": str(data_dir), "KIT_DATA_SOURCE": str(source), "PYTHONHASHSEED": "0"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return env


def run_capped(command: list[str], env: dict, cap: Cap) -> tuple[subprocess.CompletedProcess, float, float]:
    """Run ``command`` inside ``cap``; return it, its wall seconds and its CPU seconds."""
    before = os.times()
    start = time.perf_counter()
    done = subprocess.run(command, env=env, cwd=ROOT, capture_output=True, text=True, check=False,
                          preexec_fn=cap.enter if cap.kind != "none" else None)
    wall = time.perf_counter() - start
    after = os.times()
    reaped = (after.children_user + after.children_system) - (before.children_user + before.children_system)
    counted = cap.cpu_seconds()
    return done, wall, counted if counted is not None else reaped


def measure(label: str, phase: str, command: list[str], env: dict, limit_bytes: int) -> tuple[dict, str]:
    """One capped run: its row of the table, and its standard output."""
    cap = Cap.create(f"kit-bench-{os.getpid()}-{phase}-{label.replace(' ', '-')}", limit_bytes)
    try:
        done, wall, cpu = run_capped(command, env, cap)
        row = {"phase": phase, "notebook": label, "wall_s": round(wall, 1), "cpu_s": round(cpu, 1),
               "cap": f"{cap.kind}:{limit_bytes / 2**30:g}GB" if cap.kind != "none" else "none",
               "cgroup_peak_mb": _rounded(cap.peak_mb()), "limit_hits": cap.limit_hits(),
               "oom_kills": cap.oom_kills(), "returncode": done.returncode}
    finally:
        cap.remove()
    if done.returncode != 0:
        row["status"] = f"failed ({done.returncode}): {done.stderr.strip().splitlines()[-1:]}"[:200]
    return row, done.stdout


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value)


def run_notebook(path: Path, phase: str, out: Path, env: dict, limit_bytes: int) -> dict:
    folder = out / "executed" / phase
    folder.mkdir(parents=True, exist_ok=True)
    row, stdout = measure(path.stem, phase, [sys.executable, "-c", RUN_ONE, str(path), str(folder)], env,
                          limit_bytes)
    lines = stdout.strip().splitlines()
    if row["returncode"] == 0 and lines:
        result = json.loads(lines[-1])
        row.update(status=result["status"], kernel_peak_mb=result["peak_mb"], notebook_s=result["seconds"])
    return row


def summary(rows: list[dict]) -> pd.DataFrame:
    """The table: one row per run, then each phase's total over the notebooks (not the fetch)."""
    table = pd.DataFrame(rows)
    notebooks = table[table.notebook != "kit fetch"]  # Binder fetches when its image is built
    totals = notebooks.groupby("phase", sort=False)[["wall_s", "notebook_s", "cpu_s"]].sum().round(1)
    table = pd.concat([table, totals.reset_index().assign(notebook="all notebooks")], ignore_index=True)
    columns = ["phase", "notebook", "status", "wall_s", "notebook_s", "cpu_s", "kernel_peak_mb",
               "cgroup_peak_mb", "cap", "limit_hits", "oom_kills"]
    table = table[[c for c in columns if c in table]]
    counts = [c for c in ("kernel_peak_mb", "cgroup_peak_mb", "limit_hits", "oom_kills") if c in table]
    table[counts] = table[counts].astype("Int64")
    return table


def markdown(table: pd.DataFrame) -> str:
    shown = table.astype(object).where(table.notna(), "").astype(str)
    lines = ["| " + " | ".join(shown.columns) + " |", "|" + "---|" * len(shown.columns)]
    lines += ["| " + " | ".join(row) + " |" for row in shown.itertuples(index=False)]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("numbers", nargs="*", metavar="NN", help="notebook numbers (default: all)")
    parser.add_argument("--source", default=os.environ.get("KIT_DATA_SOURCE"),
                        help="folder with the archives, laid out like shared/data (default: KIT_DATA_SOURCE)")
    parser.add_argument("--out", type=Path, default=None, help="default: runs/bench-notebooks-<time>")
    parser.add_argument("--memory-gb", type=float, default=2.0)
    parser.add_argument("--keep-data", action="store_true", help="keep the fresh data folder afterwards")
    args = parser.parse_args()
    if not args.source:
        raise SystemExit("Give --source DIR (or set KIT_DATA_SOURCE): the archives to fetch from.")

    sys.path.insert(0, str(ROOT))
    from helpers.course.config import SOLUTIONS_DIR, notebooks_in

    paths = notebooks_in(SOLUTIONS_DIR, args.numbers or None)
    out = args.out or ROOT / "runs" / f"bench-notebooks-{datetime.now():%Y%m%d-%H%M%S}"
    data_dir = out / "data"
    if data_dir.exists():
        raise SystemExit(f"{data_dir} exists: the cold run needs a fresh data folder (choose another --out).")
    data_dir.mkdir(parents=True)
    env, limit = environment(data_dir, Path(args.source).resolve()), int(args.memory_gb * 2**30)
    print(f"{len(paths)} notebooks, data in {data_dir}, cap {args.memory_gb:g} GB", flush=True)

    rows = []
    fetch, _ = measure("kit fetch", "cold", [sys.executable, "-m", "helpers.cli", "fetch"], env, limit)
    rows.append({**fetch, "status": fetch.get("status", "ok")})
    print(rows[-1], flush=True)
    for phase in ("cold", "warm"):
        for path in paths:
            rows.append(run_notebook(path, phase, out, env, limit))
            print(rows[-1], flush=True)
    table = summary(rows)
    table.to_csv(out / "notebooks.csv", index=False)
    (out / "notebooks.md").write_text(markdown(table))
    print(markdown(table))
    print(f"written: {out / 'notebooks.csv'}, {out / 'notebooks.md'}")
    if not args.keep_data:
        shutil.rmtree(data_dir)


if __name__ == "__main__":
    main()
