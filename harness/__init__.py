"""Harness: dataset -> arm -> model client -> executor -> scorer -> results store -> statistics -> tables."""
