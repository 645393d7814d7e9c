"""Basic pieces every stage uses: paths, hashing, canonical JSON, value parsing, the row-outcome enum."""
