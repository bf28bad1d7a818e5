"""The cold practical's heaviest notebooks, run on the CPU the suite leaves idle.

Most of the suite's first part runs one test at a time in one process, leaving a core idle,
while the mistake catalogue, Run All and the solutions' nbval run later need the practical's
caches: the Doc2Vec models and every system's predictions, about 3,300 CPU-seconds computed
once (docs/benchmarks.md). So when a test session is to run the catalogue after other tests,
``start`` runs the solution notebooks that cost most (``HEAVIEST``, as ``kit run --solutions``
does, in the suite's own data folder) in the background at the lowest priority. The
catalogue's fixture calls ``stop`` before it begins: what is still running then is killed, and
every cache finished by then is kept (each is written atomically), so no artefact is computed by
two processes at once. Nothing is checked here: the tests that run these notebooks check them.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import psutil

#: Most cold CPU first (docs/benchmarks.md, "The practical's own cost"): 04 trains every Doc2Vec
#: model 04-08 read, 02 chooses C for five settings by nested CV, 05 deploys and changes
#: SVM-BOW, 08 cross-validates three fold schemes.
HEAVIEST = ("04", "05", "02", "08")
#: The background runs beside the suite on what CPU it leaves idle: the lowest priority.
IDLE_NICE = 19
#: Seconds between looks for the run's new processes, to lower their priority.
WATCH_SECONDS = 1.0


@dataclass
class WarmUp:
    """The background run of ``HEAVIEST``, in its own session."""

    process: subprocess.Popen
    root: psutil.Process  # made at the start: psutil checks it is still that process
    log: Path

    def stop(self) -> None:
        """Kill the run and every process it started (kernels run in sessions of their own),
        unless it has ended; again, it does nothing."""
        if self.process.poll() is None:
            frozen = _frozen_tree(self.root)
            for proc in frozen:
                try:
                    proc.kill()
                except psutil.NoSuchProcess:
                    pass
            psutil.wait_procs(frozen, timeout=30)
        self.process.wait()


def _frozen_tree(root: psutil.Process) -> list[psutil.Process]:
    """``root`` and every process it started, each stopped (SIGSTOP) before its children are
    listed, so that none can start another meanwhile."""
    frozen, pending = [], [root]
    while pending:
        proc = pending.pop()
        try:
            proc.suspend()
            pending += proc.children()
        except psutil.NoSuchProcess:
            continue
        frozen.append(proc)
    return frozen


def start(folder: Path) -> WarmUp:
    """Start running ``HEAVIEST``'s solutions, one after another, executed copies in ``folder``."""
    runs = "; ".join(f"{sys.executable} -m helpers.cli run --solutions {number} --out {folder / number}"
                     for number in HEAVIEST)
    log = folder / "warm-up.log"
    with log.open("w") as out:
        process = subprocess.Popen(["nice", "-n", str(IDLE_NICE), "bash", "-c", runs], stdout=out,
                                   stderr=subprocess.STDOUT, start_new_session=True)
    root = psutil.Process(process.pid)
    threading.Thread(target=_keep_idle, args=(process, root), daemon=True).start()
    return WarmUp(process, root, log)


def _keep_idle(process: subprocess.Popen, root: psutil.Process) -> None:
    """Let the run have only the CPU the rest of the suite leaves idle, until it ends.

    Under Linux's autogroup scheduling each session competes as a whole, whatever its
    processes' nice values, and Jupyter starts every kernel in a session of its own: so the
    session of each of the run's processes gets the lowest priority too.
    """
    while process.poll() is None:
        try:
            tree = [root, *root.children(recursive=True)]
        except psutil.Error:
            return
        for proc in tree:
            try:
                Path(f"/proc/{proc.pid}/autogroup").write_text(f"{IDLE_NICE}\n")
            except OSError:  # gone, or no autogroup scheduling: the nice value is all there is
                pass
        time.sleep(WATCH_SECONDS)
