"""voiced: a real-time voice control daemon for industrial robot cells.

This package wires the others together (config, daemon lifecycle, CLI, interpretation).
`voiced.errors` and `voiced.configschema` are the leaf modules that every package may import
(docs/ARCHITECTURE.md, "Packages"; tests/test_imports.py).
"""

__version__ = "0.1.0"
