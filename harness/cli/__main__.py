"""`python -m harness.cli ...`: the one CLI, for subprocesses started with an interpreter rather than the
`harness` script (the rehearsal launcher starts `harness serve rehearsal` this way)."""

from harness.cli import main

main(prog_name="harness")
