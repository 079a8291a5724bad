"""Command frames: a stack of frames, each with ordered rules and its own state (seed 002).

`CommandRouter` owns the stack and dispatches every utterance top to bottom. Frames never reach
the robot, the speaker or the submit targets directly: they go through the `Services` they are
given, so the same frames run on a microphone, a WAV file or typed text.
"""

from frames.base import BaseFrame
from frames.frame import Frame, Services
from frames.query import QueryFrame
from frames.router import CommandRouter, DispatchOutcome

__all__ = ["BaseFrame", "CommandRouter", "DispatchOutcome", "Frame", "QueryFrame", "Services"]
