"""Stage: the arms - the registry of Arm entries, the prompts they send, and solvers/ (how each arm turns a case into
an answer)."""
