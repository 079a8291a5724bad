"""The base frame: the bottom of the stack. Wake word, modes, help."""

from __future__ import annotations

from typing import TYPE_CHECKING

from frames.frame import Frame
from frames.query import QueryFrame
from rules import CatchAll, ExactSet, Match, Prefix, Utterance, When

if TYPE_CHECKING:
    from frames.router import CommandRouter

MODE_NAMES = {"wake": "wake word mode", "always": "always listen mode"}


class BaseFrame(Frame):
    """Wake word pushes a query frame, and the rest of the utterance goes into it ("computer add
    bread" in one breath). In always-listen mode every utterance opens a query without the wake
    word. Mode words work from any frame that hands down with `check_parent`."""

    name = "base"

    def __init__(
        self,
        wake_word: str,
        silence_timeout: float,
        listen_timeout: float,
        variants: tuple[str, ...] = (),
    ) -> None:
        self.wake_word = wake_word
        self.silence_timeout = silence_timeout
        self.listen_timeout = listen_timeout
        self._router: CommandRouter | None = None
        self.rules = (
            ExactSet("mode_query", ["mode query", "what mode", "which mode"], self._say_mode),
            ExactSet("always_listen", ["always listen", "always listen mode"], self._always),
            ExactSet("wake_word_mode", ["wake word mode", "wake mode"], self._wake_mode),
            ExactSet("help", ["what can i say", "help"], self._help),
            Prefix("wake_word", [wake_word, *variants], self._wake),
            When(self._always_listening, CatchAll("always_query", self._open_with_all), "always"),
        )

    def on_push(self, router: CommandRouter, now: float) -> None:
        self._router = router

    def _always_listening(self) -> bool:
        # Only while nothing is open: an open query accumulates for itself.
        router = self._router
        return router is not None and router.mode == "always" and router.top is self

    def _new_query(self, router: CommandRouter, utterance: Utterance, text: str) -> None:
        # The wake word said again while a query is open continues that query instead of
        # stacking a second one.
        query = router.top if isinstance(router.top, QueryFrame) else None
        if query is None:
            query = QueryFrame(self.silence_timeout, self.listen_timeout)
            router.push(query)
        if text.strip():
            query.append(text, utterance)

    def _wake(self, router: CommandRouter, utterance: Utterance, match: Match) -> None:
        self._new_query(router, utterance, _rest_as_said(utterance.text, match))

    def _open_with_all(self, router: CommandRouter, utterance: Utterance, match: Match) -> None:
        self._new_query(router, utterance, utterance.text)

    def _say_mode(self, router: CommandRouter, utterance: Utterance, match: Match) -> None:
        router.services.speak(f"I am in {MODE_NAMES[router.mode]}.")

    def _always(self, router: CommandRouter, utterance: Utterance, match: Match) -> None:
        router.set_mode("always")
        router.services.speak("Always listen mode. I will act on everything I hear.")

    def _wake_mode(self, router: CommandRouter, utterance: Utterance, match: Match) -> None:
        router.set_mode("wake")
        router.services.speak(f"Wake word mode. Say {self.wake_word} first.")

    def _help(self, router: CommandRouter, utterance: Utterance, match: Match) -> None:
        router.services.speak(router.top.help() or self.help())

    def help(self) -> str:
        return (
            f'Say "{self.wake_word}" and a command, for example "{self.wake_word}, add bread". '
            'You can also say "always listen", "wake word mode", "mode query" or "stop".'
        )


def _rest_as_said(text: str, match: Match) -> str:
    """The words after the wake word, keeping the operator's own wording and punctuation where
    possible (the normalised rest is the fallback)."""
    rest = match.args.get("rest", "")
    if not rest:
        return ""
    tokens = text.split()
    n_rest = len(rest.split())
    if 0 < n_rest <= len(tokens):
        return " ".join(tokens[len(tokens) - n_rest :]).strip(" ,.!?")
    return rest
