"""Benchmarks of the runner (scripts; results in bench/results/)."""
