"""The rehearsal server (a scripted fake, harness.model.rehearsal.server.RehearsalServer) on a free port, in a
background thread."""

from __future__ import annotations

from contextlib import contextmanager

import pytest


def rehearsal_run_args(server, out, arms, *, seeds="42", concurrency=8, extra=()) -> list[str]:
    """`harness run` arguments for `arms` on the bundled slice against a running rehearsal server (the scripted FAKE:
    synthetic replies), served as `rehearsal-alpha` with the plain profile, into `out`."""
    return [
        "run",
        "--arms",
        ",".join(arms),
        "--dataset",
        "bundled-test",
        "--seeds",
        seeds,
        "--base-url",
        server.base_url,
        "--model",
        "rehearsal-alpha",
        "--server-profile",
        "plain",
        "--out",
        str(out),
        "--no-progress",
        "--concurrency",
        str(concurrency),
        *extra,
    ]


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
