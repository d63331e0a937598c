"""`mcugen sweep`'s engine (issue 36)."""
