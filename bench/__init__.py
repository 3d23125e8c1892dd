"""navmcp benchmarks: `python -m bench` (see BENCHMARKS.md)."""
