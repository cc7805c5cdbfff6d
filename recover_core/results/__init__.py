"""Tidy result tables in precomputed/ and vats2024's claims checked on them."""
