"""Stage: verification of committed results - rescoring stored replies and sha256 checksum manifests."""
