"""Benchmarks and the app builders they share with the scale tests."""
