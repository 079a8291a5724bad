"""Command frames: a stack of frames, each with ordered rules and its own state (seed 002).

`CommandRouter` owns the stack and dispatches every utterance top to bottom. Frames never reach
the robot, the speaker or the submit targets directly: they go through the `Services` they are
given, so the same frames run on a microphone, a WAV file or typed text.
"""

from voiced.frames.base import BaseFrame
from voiced.frames.confirm import Answer, ConfirmFrame
from voiced.frames.dictation import DictationFrame
from voiced.frames.query import QueryFrame
from voiced.frames.review import ReviewFrame
from voiced.frames.router import CommandRouter, DispatchOutcome, Frame
from voiced.frames.services import Services
from voiced.frames.voice import VoicePickerFrame

__all__ = [
    "Answer",
    "BaseFrame",
    "CommandRouter",
    "ConfirmFrame",
    "DictationFrame",
    "DispatchOutcome",
    "Frame",
    "QueryFrame",
    "ReviewFrame",
    "Services",
    "VoicePickerFrame",
]
