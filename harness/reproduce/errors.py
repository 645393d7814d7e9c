"""The reproduce package's one error type."""

from __future__ import annotations


class ReproduceError(RuntimeError):
    """A reproduction that cannot be planned or run as asked; the message says what to change."""
