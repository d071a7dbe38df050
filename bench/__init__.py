"""Benchmarks: committed scripts that print figures; results are kept in BENCHMARKS.md."""
