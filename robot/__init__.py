"""The robot end: cell model, scene state, compiler, wire protocol, executor and simulator.

Knows nothing of frames, rules or audio.
"""
