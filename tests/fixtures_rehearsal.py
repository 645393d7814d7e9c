"""The rehearsal server (a scripted fake, harness.model.rehearsal.server.RehearsalServer) on a free port, in a
background thread."""

from __future__ import annotations

from contextlib import contextmanager

import pytest


@contextmanager
def running_rehearsal_server(**kwargs):
    """A RehearsalServer on 127.0.0.1 (free port) serving from a background event loop; yield it."""
    from harness.model.rehearsal.server import RehearsalServer

    with RehearsalServer(port=0, **kwargs) as server:
        yield server


@pytest.fixture
def rehearsal_server():
    """A fault-free rehearsal server with the bundled slice as its answer key, seed 7."""
    from harness.data.dataset import load_dataset

    with running_rehearsal_server(seed=7, answer_key=load_dataset("bundled-test").path) as server:
        yield server
