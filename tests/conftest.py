"""Shared fixtures. Tests never reach the network, a microphone or a GPU."""

from __future__ import annotations

import os

# An API key in the developer's shell must never make a test talk to the real service.
os.environ.pop("ANTHROPIC_API_KEY", None)
os.environ.pop("VOICED_CONFIG", None)
os.environ.pop("VOICED_DATA_DIR", None)
