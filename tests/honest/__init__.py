"""The honest corpus: programs in the shape models write them for MedCalc-Bench (issue 33)."""
