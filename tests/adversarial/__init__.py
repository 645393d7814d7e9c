"""Adversarial programs for the executor (see cases.py)."""
