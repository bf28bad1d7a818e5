"""The cold practical's costliest caches, computed beside the suite's first part.

Most of the suite's first part runs one test at a time in one process, leaving a core idle,
while the tests that come later (the mistake catalogue, Run All, the solutions' nbval) read the
practical's costliest caches: SVM-BOW's nested choice of features and C, the Doc2Vec models of
notebook 04 (the kit's and the sample's) and the five SVM settings of notebook 02. ``start``
computes them in the background from the start of the session, one at a time and one process
at a time, at the suite's own priority (a lower one would make a test that waits for an
artefact it is computing wait for the whole suite), in the suite's own data folder.
``storage.cached`` computes each artefact once: a test that needs one that is being computed
waits for it and reads it. Nothing is checked here: the tests that read these caches check
what they read.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from helpers.settings import REPO_ROOT

#: What is computed, in order: SVM-BOW first (notebook 03's ``kit check`` test reads it early),
#: then the longest of 04's models, the kit's (in a CI simulation of 2026-11-30 the catalogue's
#: fixture trained it alone for 8 minutes while this computation and the grading that needs the
#: models waited for it, one core idle), then 02's five SVM settings, then the sample's models,
#: shortest first (the catalogue's fixture trains them longest first, so the two seldom wait
#: for the same model). Folds and models run one at a time (``n_jobs=1``, one Doc2Vec worker
#: whatever KIT_PROFILE says, as the models' readers ask for): the other core is the suite's.
SCRIPT = f"""\
import signal, sys
signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # a stop unwinds: no half-written file left
sys.path.insert(0, {str(REPO_ROOT / "tests")!r})
from helpers import embeddings, evaluation, systems
from test_mistakes import _models

def train(config):
    embeddings.review_vectors(config, embeddings.workers_for("quick"), progress=False)

evaluation.cross_validate(systems.system("svm-bow"), "svm-bow", progress=False, n_jobs=1)
longest, *others = embeddings.longest_first(dict.fromkeys(_models()))
train(longest)
for name, setting in systems.SVM_FEATURES.items():
    evaluation.cross_validate(setting, name, progress=False, n_jobs=1)
for config in reversed(others):
    train(config)
print("warm-up done")
"""
#: Seconds a stopped computation has to exit on its own before it is killed.
STOP_SECONDS = 30


@dataclass
class WarmUp:
    """The background computation, in a process of its own."""

    process: subprocess.Popen
    log: Path

    def stop(self) -> None:
        """End the computation (it runs in a session of its own, started without children):
        SIGTERM, which it turns into an exit that cleans up, then SIGKILL if it is still there.
        What it finished stays cached (each artefact is written atomically)."""
        for sign, wait in ((signal.SIGTERM, STOP_SECONDS), (signal.SIGKILL, None)):
            if self.process.poll() is not None:
                return
            os.killpg(self.process.pid, sign)
            try:
                self.process.wait(wait)
            except subprocess.TimeoutExpired:
                continue


def start(folder: Path) -> WarmUp:
    """Start computing ``SCRIPT``'s caches in the background; its output goes to ``folder``."""
    log = folder / "warm-up.log"
    with log.open("w") as out:
        process = subprocess.Popen([sys.executable, "-c", SCRIPT], stdout=out, stderr=subprocess.STDOUT,
                                   cwd=REPO_ROOT, start_new_session=True)
    return WarmUp(process, log)
