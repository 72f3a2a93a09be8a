"""Benchmarks of issue 6 (``python -m bench``); see bench/README.md. Not part of the tests."""
