"""Session fixture `slurm_cluster`: the one-node SLURM cluster of scripts/install-slurm.sh (`make slurm`, which
`make test` runs), answering with a node that can take jobs. Missing, the test is skipped locally and FAILS in CI
(`require`). Every test using it is marked `slurm` (tests/lanes.py)."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from tests.conftest import claim, require


def slurm_node_idle() -> bool:
    """Whether sinfo answers with a node in a state that takes jobs."""
    if shutil.which("sinfo") is None or shutil.which("sbatch") is None:
        return False
    r = subprocess.run(["sinfo", "-h", "-o", "%T"], capture_output=True, text=True, timeout=30)
    return r.returncode == 0 and any(s.strip() in ("idle", "mixed", "allocated") for s in r.stdout.splitlines())


@pytest.fixture(scope="session")
def slurm_cluster(request) -> None:
    claim(request, "slurm")
    require(slurm_node_idle(), "no SLURM cluster answering with an idle node (run `make slurm`)")
