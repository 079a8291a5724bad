"""voiced: a real-time voice control daemon for industrial robot cells.

This package wires the others together (config, daemon lifecycle, CLI, interpretation).
`voiced.errors` is the one leaf module that every package may import.
"""

__version__ = "0.1.0"
