"""The rehearsal server (a scripted fake, harness.model.rehearsal.server) on a free port, in a thread."""
from __future__ import annotations

import asyncio
import threading
from contextlib import contextmanager

import pytest


@contextmanager
def running_rehearsal_server(**kwargs):
    """Start a RehearsalServer on 127.0.0.1 (free port) in a background event loop; yield it."""
    from harness.model.rehearsal.server import RehearsalServer

    server = RehearsalServer(port=0, **kwargs)
    loop = asyncio.new_event_loop()
    started = threading.Event()

    def run():
        asyncio.set_event_loop(loop)
        loop.run_until_complete(server.start())
        started.set()
        loop.run_forever()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    assert started.wait(30), "rehearsal server did not start"
    try:
        yield server
    finally:
        asyncio.run_coroutine_threadsafe(server.close(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)


@pytest.fixture
def rehearsal_server():
    """A fault-free rehearsal server with the bundled slice as its answer key, seed 7."""
    from harness.data.dataset import load_dataset
    with running_rehearsal_server(seed=7, answer_key=load_dataset("bundled-test").path) as server:
        yield server
