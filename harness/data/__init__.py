"""Stage: the benchmark data - loading and validating MedCalc-Bench splits (dataset) and fetching/pinning them
(datahub). The bundled CSVs live beside these modules."""
