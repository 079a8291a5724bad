"""The voice picker: a known voice name switches the speaking voice. Exclusive."""

from __future__ import annotations

from collections.abc import Sequence

from voiced.frames.router import CommandRouter, Frame
from voiced.rules import ExactSet, Match, Utterance


class VoicePickerFrame(Frame):
    """Seed 002's voice picker: only voice names and cancel are valid here (no check_parent)."""

    name = "voice_picker"
    dropped_by_stop = True

    def __init__(self, voices: Sequence[str]) -> None:
        self.voices = tuple(voices)
        self.rules = (
            ExactSet("cancel", ["cancel", "never mind", "no", "keep this voice"], self._cancel),
            *(ExactSet(f"voice:{v}", [v, f"{v} voice", f"use {v}"], self._pick) for v in voices),
        )

    def on_push(self, router: CommandRouter, now: float) -> None:
        router.services.speak(self.help())

    def _pick(self, router: CommandRouter, utterance: Utterance, match: Match) -> None:
        wanted = match.rule.removeprefix("voice:")
        router.services.set_voice(wanted)
        router.pop(self)
        router.services.speak(f"This is {wanted}.")

    def _cancel(self, router: CommandRouter, utterance: Utterance, match: Match) -> None:
        router.pop(self)
        router.services.speak("Keeping the current voice.")

    def help(self) -> str:
        return "Which voice? Say one of: " + ", ".join(self.voices) + '. Or say "cancel".'
