"""A kernel to talk to, for the tests of the kit's kernel (test_kernel, test_reveal, test_unsaved)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from jupyter_client.blocking import BlockingKernelClient
from jupyter_client.manager import start_new_kernel

from helpers.cli import lab_environment
from helpers.settings import LAB_SESSION_ENV

KERNEL_START_SECONDS = 120  # a loaded machine starts kernels slowly; this only bounds a hang


@contextmanager
def kernel_client(cwd: Path) -> Iterator[BlockingKernelClient]:
    """A client of a ``python3`` kernel started in ``cwd`` with this process's environment;
    the kernel is shut down afterwards."""
    manager, client = start_new_kernel(kernel_name="python3", cwd=str(cwd),
                                       startup_timeout=KERNEL_START_SECONDS)
    try:
        yield client
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


@contextmanager
def lab_kernel(cwd: Path, monkeypatch: pytest.MonkeyPatch,
               notebook: Path | None = None) -> Iterator[BlockingKernelClient]:
    """A client of the kernel ``kit lab`` starts (its environment puts the kit's kernel first),
    for ``notebook`` when given (``JPY_SESSION_NAME``, as jupyter_server sets it)."""
    for name, value in lab_environment(os.environ).items():
        monkeypatch.setenv(name, value)
    if notebook is not None:
        monkeypatch.setenv(LAB_SESSION_ENV, str(notebook))
    with kernel_client(cwd) as client:
        yield client


def send_as_the_lab(client: BlockingKernelClient, code: str, metadata: dict) -> str:
    """Send ``code`` as JupyterLab runs a cell: an execute request carrying the cell's
    ``metadata`` (its ``cellId`` and its own metadata), which nbclient never sends; its id."""
    content = {"code": code, "silent": False, "store_history": True, "user_expressions": {},
               "allow_stdin": False, "stop_on_error": True}
    message = client.session.msg("execute_request", content, metadata=metadata)
    client.shell_channel.send(message)
    return message["header"]["msg_id"]
