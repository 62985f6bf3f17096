"""Benchmarks: they measure and write figures (JSON and Markdown); they are not tests."""
