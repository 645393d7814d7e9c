"""`python -m bench`: the benchmarks' command line (bench/cli.py)."""

from bench.cli import main

main(prog_name="python -m bench")
