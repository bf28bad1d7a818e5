"""The lab's contents manager: the Jupyter server refuses to serve the instructor's folders.

``hide_globs`` only keeps ``solutions/`` out of the file browser; the server still answers
``/api/contents/solutions/...`` and ``/files/solutions/...``. The released ``notebooks/`` are
refused too: students work in ``work/``, and ``/lab/tree/notebooks/01_naive_bayes.ipynb``
would otherwise open the pristine release (and start a kernel on it) beside their own copy
of the same name; ``kit check`` and ``check("N.M")`` read it from the disk. ``kit lab`` and
Binder's ``start`` load this manager (``jupyter_config/jupyter_server_config.json``): every
path inside one of ``REFUSED_FOLDERS`` of the repository (or of the server's root), reached
directly or through a symbolic link, is hidden, does not exist, and cannot be read, listed,
copied, renamed, saved, deleted or given a kernel. ``/files/`` is served through this manager
too (jupyter_server's own file handler checks hidden files by name only, never asking the
manager).

A kernel the student starts can still read any file it can open: a student copy made by
``kit release --student-repo`` (``helpers.course.notebook.student_copy``) holds no solutions at all.
"""

from __future__ import annotations

import os
from pathlib import Path

from jupyter_server.files.handlers import FilesHandler
from jupyter_server.services.contents.largefilemanager import AsyncLargeFileManager
from tornado import web
from traitlets import List, Unicode, default

from helpers.settings import REPO_ROOT

#: Folders no student may read through the lab: model answers and hidden checks
#: (``solutions/``), executed solutions (``runs/``, ``kit run --solutions``), the tests
#: and benchmarks, which quote solution code and reference numbers, the course's
#: rubric (``course/``), whose worked example quotes results students first predict, and
#: the released notebooks (``notebooks/``), which students never open: their copies are in
#: ``work/``.
REFUSED_FOLDERS = ("solutions", "runs", "tests", "benchmarks", ".ci", "course", "notebooks")


class KitContentsManager(AsyncLargeFileManager):
    """JupyterLab's usual file manager, except that the refused folders do not exist for it."""

    refused_folders = List(Unicode(), default_value=list(REFUSED_FOLDERS), config=True,
                           help="Folders of the repository (and of root_dir) the server never serves.")

    @default("files_handler_class")
    def _files_handler_class_default(self) -> type:
        return FilesHandler  # serves /files/ through get() and is_hidden() below

    def refuses(self, path: str) -> bool:
        """Whether the API path ``path`` lies in a refused folder (symbolic links followed).

        Parameters
        ----------
        path : str
            A ``/``-separated path relative to ``root_dir``.

        Returns
        -------
        bool
            True for a refused folder itself, anything inside one, and a path outside the root.
        """
        try:
            os_path = self._get_os_path(path.strip("/"))
        except web.HTTPError:  # outside the root
            return True
        refused = [folder for folder in self._refused_dirs() if folder.is_dir()]
        target = Path(os_path).resolve()
        # samefile, not a comparison of names: a case-insensitive file system (macOS,
        # Windows) opens SOLUTIONS/ as solutions/
        return any(os.path.samefile(place, folder)
                   for place in (target, *target.parents) if place.exists()
                   for folder in refused)

    def _refused_dirs(self) -> list[Path]:
        roots = {REPO_ROOT, Path(self.root_dir).resolve()}
        return [root / name for root in sorted(roots) for name in self.refused_folders]

    def _refuse(self, *paths: str) -> None:
        for path in paths:
            if self.refuses(path):
                raise web.HTTPError(404, f"No such file or directory: {path}")

    async def is_hidden(self, path: str) -> bool:
        """Hidden: a refused path, or what jupyter_server hides (dot files)."""
        return self.refuses(path) or await super().is_hidden(path)

    async def file_exists(self, path: str) -> bool:
        """A file exists unless it is refused."""
        return not self.refuses(path) and await super().file_exists(path)

    async def dir_exists(self, path: str) -> bool:
        """A folder exists unless it is refused."""
        return not self.refuses(path) and await super().dir_exists(path)

    # jupyter_server's AsyncFileContentsManager itself inherits a synchronous exists (from
    # FileContentsManager) over AsyncContentsManager's async one: ours overrides that one
    def exists(self, path: str) -> bool:  # type: ignore[override]
        """A path exists unless it is refused (synchronous, as jupyter_server's own)."""
        return not self.refuses(path) and super().exists(path)

    async def get(self, path: str, content: bool = True, type: str | None = None,  # noqa: A002
                  format: str | None = None, require_hash: bool = False) -> dict:  # noqa: A002
        """The model of ``path``; 404 for a refused path."""
        self._refuse(path)
        return await super().get(path, content=content, type=type, format=format,
                                 require_hash=require_hash)

    async def get_kernel_path(self, path: str, model: dict | None = None) -> str:
        """The folder a kernel for ``path`` starts in; 404 for a refused path, so that no
        kernel starts on a notebook the lab does not serve."""
        self._refuse(path)
        return await super().get_kernel_path(path, model=model)

    async def save(self, model: dict, path: str = "") -> dict:
        """Save ``model`` at ``path``; 404 for a refused path."""
        self._refuse(path)
        return await super().save(model, path)

    async def delete_file(self, path: str) -> None:
        """Delete ``path``; 404 for a refused path."""
        self._refuse(path)
        await super().delete_file(path)

    async def rename_file(self, old_path: str, new_path: str) -> None:
        """Rename ``old_path`` to ``new_path``; 404 if either is refused."""
        self._refuse(old_path, new_path)
        await super().rename_file(old_path, new_path)
