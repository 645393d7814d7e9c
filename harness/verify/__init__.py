"""Stage: verification of results - rescoring stored replies (the one rescoring, also `harness score`s) and checking
result files against their sha256 sums."""
