"""Corpora and word lists that install here."""
