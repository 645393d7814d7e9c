"""Helpers of the analysis tests: how often the store's reader parses a results file."""

from __future__ import annotations

from harness.run import store


def count_parses(monkeypatch, module=None) -> list:
    """The results files the store parses from now on, one entry per parse: every parse (the store's one parser,
    `scan_result_file`), or only `module`'s calls of the store's reader (`read_result_file`, as the module imported
    it)."""
    calls: list = []
    name = "scan_result_file" if module is None else "read_result_file"
    real = getattr(store, name)

    def counting(path):
        calls.append(path)
        return real(path)

    monkeypatch.setattr(module or store, name, counting)
    return calls
