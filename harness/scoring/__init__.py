"""Stage: scoring - answer parsing, the paper scorer, the official MedCalc-Bench rules and their expression
evaluator."""
