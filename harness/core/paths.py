"""Where the repository and the package's bundled files are on disk (one definition, used by every stage)."""

from __future__ import annotations

from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parents[1]
REPO_ROOT = PACKAGE_DIR.parent
BUNDLED_DATA_DIR = PACKAGE_DIR / "data"
