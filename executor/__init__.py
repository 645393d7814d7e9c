"""Hardened executor for model-written clinical calculation programs.

Standard library only, apart from pyseccomp. The whole policy lives in
executor/policy.py; read that file first.
"""
