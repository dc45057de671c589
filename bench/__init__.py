"""Benchmarks. `python -m bench` (make bench) runs every section and writes docs/benchmarks.md."""
