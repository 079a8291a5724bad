"""Raw dictation: everything is content until the exit phrase. Exclusive, no silence timer."""

from __future__ import annotations

from voiced.frames.router import CommandRouter, Frame
from voiced.rules import CatchAll, ExactSet, Match, Utterance

END_PHRASES = ("end dictation", "stop dictation", "finish dictation")
"""What ends dictation (what was said is saved)."""
STILL_DICTATING = 'Still dictating: say "end dictation" to finish.'


class DictationFrame(Frame):
    """Seed 002's narrow-exit frame. Command words ("cancel", "go", "add bread") and repeated
    fragments ("zero zero zero") are content, kept as said. "save note" sends what has been
    dictated so far and keeps dictating (inventory mode: capture now, process later); "end
    dictation" sends the rest and leaves. Only the global stop reaches past it, and even a stop
    keeps the dictated text: it belongs to the operator. So does the end of the session: at end of
    input or on SIGTERM what was dictated and not yet saved is saved."""

    name = "dictation"
    dropped_by_stop = False

    def __init__(self, target: str) -> None:
        self.target = target
        self.parts: list[str] = []
        self.correlation_id: str | None = None
        self.rules = (
            ExactSet(
                "end",
                list(END_PHRASES),
                self._end,
                fuzzy=90.0,
            ),
            ExactSet("save", ["save note", "save that", "save it"], self._save, fuzzy=90.0),
            ExactSet("discard", ["discard dictation"], self._discard, fuzzy=None),
            CatchAll("content", self._append),
        )

    @property
    def text(self) -> str:
        return " ".join(self.parts)

    def on_push(self, router: CommandRouter, now: float) -> None:
        router.services.speak('Dictating. Say "save note" to save, "end dictation" to finish.')

    def _append(self, router: CommandRouter, utterance: Utterance, match: Match) -> None:
        self.parts.append(utterance.text.strip())
        self.correlation_id = self.correlation_id or utterance.correlation_id

    async def _send(self, router: CommandRouter) -> bool:
        if not self.parts:
            return False
        text, self.parts = self.text, []
        await router.services.submit(self.target, text, self.correlation_id, source=self.name)
        self.correlation_id = None
        return True

    async def _save(self, router: CommandRouter, utterance: Utterance, match: Match) -> None:
        if not await self._send(router):
            router.services.speak("Nothing to save yet.")

    async def _end(self, router: CommandRouter, utterance: Utterance, match: Match) -> None:
        await self.finish(router)

    async def finish(self, router: CommandRouter) -> None:
        """Save what was dictated and leave ("end dictation"; a stop said as "stop dictation")."""
        sent = await self._send(router)
        router.pop(self)
        router.services.speak("Dictation ended." if sent else "Dictation ended; nothing to save.")

    async def on_end(self, router: CommandRouter) -> None:
        # Input ended or the daemon is told to stop mid-dictation: what was said is the
        # operator's, so it is saved as "save note" would save it.
        await self._send(router)

    def _discard(self, router: CommandRouter, utterance: Utterance, match: Match) -> None:
        dropped = len(self.parts)
        self.parts = []
        router.pop(self)
        router.services.speak(f"Discarded {dropped} unsaved part{'s' if dropped != 1 else ''}.")

    def help(self) -> str:
        return 'Everything you say is written down. "Save note" saves, "end dictation" finishes.'
