"""Benchmarks that print figures (never asserted by tests): `python -m bench.robot_link`.

See bench/README.md for what each one measures, how to run it and the targets.
"""
