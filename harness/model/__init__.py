"""Model serving and clients (the rehearsal server lives here)."""
