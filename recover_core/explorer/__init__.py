"""The live explorer's logic, free of any UI (app.py's Text tab calls it)."""
