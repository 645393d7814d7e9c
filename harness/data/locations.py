"""Where datasets live on disk: the bundled slices, the shared dev split and the Verified download cache.

Each location can be moved with an environment variable (tests point them at copies).
"""

from __future__ import annotations

import os
from pathlib import Path

from harness.core.paths import BUNDLED_DATA_DIR, REPO_ROOT

BUNDLED_DIR = BUNDLED_DATA_DIR


def shared_dir() -> Path:
    """$MEDCALC_SHARED_DIR, or the development checkout's ../shared/data/medcalc-bench (harness/data/dev_split.py
    says where the dev split is looked for: there only after the data cache)."""
    env = os.environ.get("MEDCALC_SHARED_DIR")
    return Path(env) if env else REPO_ROOT.parent / "shared" / "data" / "medcalc-bench"


def cache_dir() -> Path:
    """Download cache for the Verified split: $MATHSOLVER_DATA_DIR or ~/.cache/mathsolver-kit."""
    env = os.environ.get("MATHSOLVER_DATA_DIR")
    return Path(env) if env else Path.home() / ".cache" / "mathsolver-kit"


def bundled_dir() -> Path:
    """Directory of the bundled slices: $MATHSOLVER_BUNDLED_DIR (for tests on copies) or harness/data."""
    env = os.environ.get("MATHSOLVER_BUNDLED_DIR")
    return Path(env) if env else BUNDLED_DIR
