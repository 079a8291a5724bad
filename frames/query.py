"""The query frame: accumulates what the operator says until go / silence, then submits it."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from functools import partial

import structlog
from voiced.frames.pieces import CLOCK_EPSILON, FAR_TALK_DB, Part, stretch_of
from voiced.frames.router import CommandRouter, Frame
from voiced.rules import (
    CatchAll,
    ExactSet,
    Match,
    Utterance,
    check_parent,
    heard_as,
    normalize,
    words,
    words_after,
    words_before,
)
from voiced.rules.negation import BEARS_ON_NEXT, CORRECTS, NEGATIONS, takes_back

log = structlog.get_logger(__name__)


CANCEL_WORDS = ("cancel", "abort", "never mind", "cancel that")
"""What drops a command still being said (and a question for what it left out)."""
SUBMIT_WORDS = ("go", "done", "send", "do it", "go ahead")
"""What sends a command at once."""
_ENDINGS = "|".join(re.escape(word) for word in (*CANCEL_WORDS, *SUBMIT_WORDS))
_TRAILING = re.compile(rf"^(?P<rest>.*\w)[\s,.;:!?-]+(?P<last>{_ENDINGS})[\s.!?]*$", re.IGNORECASE)
"""A command with a cancel or send word said after it in the same breath ("add bread, cancel",
"add bread, go")."""
_ONLY_NO = re.compile(r"(?:\W*\b(?:no|nope|oh|uh|um|ah|hmm|well|okay|ok)\b)+\W*", re.IGNORECASE)
"""Words before that are only "no"s and sounds ("No, no, no." ... "can I get a large
cappuccino?"): they take back what came before them, not a command of its own after them. A
"no" with any other word ("there should be no" ... "cheese", "put no" ... "cheese"), or before
words that go on from it ("no" ... "cheese on the left"), governs what follows."""


_NUMBER = re.compile(r"\d+(?:\.\d+)?")
"""A number in normalised text, alone or joined to letters ("1.5", "15mm", "2nd")."""
MENDED_OPENING_WORDS = 3
"""How many first words of pieces heard again whole may be other words in the whole ("I won
a" -> "I want a", "me I have" -> "may I have") for it to be acted on unasked."""


def _mends_opening(
    said: str, whole: str, is_complete: Callable[[str], bool], verb: Callable[[str], bool]
) -> bool:
    """Whether `whole` is `said`'s words, numbers as digits, but for at most its first
    `MENDED_OPENING_WORDS`, an opening that chose no action: the numbers are the same, the
    words kept are no command of their own ("16 ounce dark roast iced mocha" is none; "seam
    2", "at position 2" are: "Czech" ... "seam two" heard whole as "Tack seam 2" changed the
    action), and the new words hold no verb of the cell ("I won a" -> "I want a" holds none;
    "Rays 15" ... "millimeters" -> "Lower 15 millimeters" chose the direction)."""
    before, after = normalize(said).split(), normalize(whole).split()
    common = 0
    while common < min(len(before), len(after)) and before[-1 - common] == after[-1 - common]:
        common += 1
    rest = max(len(before), len(after)) - common
    if common == 0 or rest > MENDED_OPENING_WORDS:
        return False
    if _NUMBER.findall(" ".join(before)) != _NUMBER.findall(" ".join(after)):
        return False
    new = after[: len(after) - common]
    if any(verb(" ".join(new[i:])) for i in range(len(new))):
        return False
    return not is_complete(" ".join(after[-common:]))


def _takes_back(router: CommandRouter, text: str) -> bool:
    """Whether `text` holds a "no", a take-back or a stop."""
    return bool(NEGATIONS & set(words(text))) or takes_back(text) or router.stops(text)


def _doubted(utterance: Utterance, doubt: str) -> Utterance:
    """`utterance` with `doubt` before any doubt it had (joined as `Services.submit` joins
    them)."""
    return replace(utterance, doubt="; ".join(d for d in (doubt, utterance.doubt) if d))


class QueryFrame(Frame):
    """Seed 002's query frame. It owns the accumulated text, the silence timer and the
    loud-streak counter; they die with the frame.

    `check_parent` stands before the catch-all, so the base frame gets first refusal: its mode
    words still work while a query is open, and only what it ignores is accumulated.
    """

    name = "query"
    dropped_by_stop = True

    def __init__(
        self,
        silence_timeout: float,
        listen_timeout: float,
        target: str = "robot",
        complete_timeout: float | None = None,
        on_quick_submit: Callable[[float], None] | None = None,
    ) -> None:
        self.on_quick_submit = on_quick_submit
        """Called with the clock when a whole command went on the short timer (the base
        frame then takes a wake-less continuation as the next command)."""
        self.silence_timeout = silence_timeout
        self.complete_timeout = silence_timeout if complete_timeout is None else complete_timeout
        self.complete = False
        """Whether the text so far already forms a whole command (checked on each append)."""
        self.going_on = False
        """Whether that whole command is also the start of a longer one of the cell's
        sentences: it waits the full silence timer, as a partial one does."""
        self.listen_timeout = listen_timeout
        self.target = target
        self.parts: list[str] = []
        self.whole_parts = 0
        """How many of `parts` made the last whole command said (0: none yet); parts after it
        that made it none may be talk (`_talk_after`)."""
        self.level_db: float | None = None
        """How loud the loudest part said so far was (None: typed, or not measured)."""
        self.levels: list[float | None] = []
        """How loud each part was."""
        self.spans: list[tuple[float | None, float]] = []
        """When each part's speech began (None: not known) and ended, on the input clock."""
        self.unheard_until: float | None = None
        """When speech after the last part ended that became no part (rejected as no speech,
        too short): the rest of an order that waited for it may be there, unread alone."""
        self.part_doubts: list[str | None] = []
        """Why the recogniser was not sure of each part (None: it was)."""
        self.opened_at = 0.0
        self.last_heard = 0.0
        self.loud_streak = 0
        self.correlation_id: str | None = None
        self.rules = (
            ExactSet("cancel", CANCEL_WORDS, self._cancel),
            ExactSet("submit", SUBMIT_WORDS, self._submit_now),
            ExactSet("read_back", ["read back", "read it back", "what did i say"], self._read),
            check_parent,
            CatchAll("accumulate", self._accumulate),
        )

    @property
    def text(self) -> str:
        return " ".join(self.parts)

    @property
    def doubts(self) -> list[str]:
        """Why the recogniser was not sure of a part (the command is read back before it runs)."""
        return [doubt for doubt in self.part_doubts if doubt is not None]

    def on_push(self, router: CommandRouter, now: float) -> None:
        self.opened_at = now
        self.last_heard = now

    def on_uncover(self, router: CommandRouter, now: float) -> None:
        # Back on top after a voice picker or dictation: the operator gets the full silence
        # time again instead of an instant submit; what was said to them is not this query's.
        self.opened_at = now
        self.last_heard = now
        self.unheard_until = None

    def append(self, text: str, utterance: Utterance, router: CommandRouter | None = None) -> None:
        self.parts.append(text.strip())
        self.levels.append(utterance.level_db)
        self.spans.append((utterance.start, utterance.t))
        self.unheard_until = None
        if utterance.level_db is not None:
            self.level_db = max(utterance.level_db, self.level_db or utterance.level_db)
        self.part_doubts.append(utterance.doubt)
        self.last_heard = utterance.t
        self.correlation_id = self.correlation_id or utterance.correlation_id
        if router is not None:
            self.complete = router.services.is_complete(self.text)
            if self.complete:
                self.whole_parts = len(self.parts)
            self.going_on = self.complete and router.services.may_go_on(normalize(self.text))

    def on_activity(self, now: float, voiced: bool) -> None:
        # While the operator keeps talking the silence timer must not fire, even if the
        # transcript of the current phrase has not arrived yet.
        self.loud_streak = self.loud_streak + 1 if voiced else 0
        if voiced:
            self.last_heard = now
        elif self.parts:
            self.unheard_until = now

    async def on_tick(self, router: CommandRouter, now: float) -> None:
        if self not in router.stack or self.loud_streak > 0:
            return
        # A whole command goes after a short silence; a partial one ("computer, add ...")
        # waits the full silence timer for the rest, and so does one the cell's sentences
        # say may go on ("I want a latte" ... "with oat milk"), as a closed grammar's
        # endpointing waits.
        quick = self.complete and not self.going_on
        wait = self.complete_timeout if quick else self.silence_timeout
        if self.parts and now - self.last_heard >= wait - CLOCK_EPSILON:
            if quick and self.on_quick_submit is not None:
                self.on_quick_submit(now)
            await self._submit(router, waited=True)
        elif not self.parts and now - self.opened_at >= self.listen_timeout:
            router.pop(self)
            router.services.speak("I didn't hear a command.")

    async def send(self, router: CommandRouter) -> None:
        """Send what was said so far now (the operator began the next command)."""
        await self._submit(router)

    async def _submit(self, router: CommandRouter, waited: bool = False) -> None:
        """Send what was said. `waited`: the silence timer ran out (nothing said since was
        another part: speech in the wait that made none may be the rest)."""
        text, doubts, level = self.text, self.doubts, self.level_db
        talk = self._talk_after(router)
        if talk is not None:
            # "Make me an 8 ounce coffee." ... "All right.": joined, both were refused. The
            # words after it may be another voice's or the operator's, so the command goes
            # alone and is made only on a yes to a question that quotes them ('I heard "All
            # right." after ...'); the answer is heard at the command's own level.
            whole = self.whole_parts
            text = " ".join(self.parts[:whole])
            doubts = [*doubts, words_after(talk)]
            level = max((db for db in self.levels[:whole] if db is not None), default=None)
            log.info("a whole command said back, the words after it left", sent=text, left=talk)
        elif self._no_command(router) and (again := await self._heard_whole(router)) is not None:
            text, doubts, level = again
        elif waited and self.going_on and self._unheard_after(router):
            # "Get me a small, dark roast, americano," ... (the kitchen over "with some soy
            # milk", rejected as no speech): the order waited for its rest, and speech came
            # that made no words alone. Heard whole, what it names more is asked about.
            again = await self._heard_whole(router, until=self.unheard_until)
            text, doubts, level = again or (text, doubts, level)
        await self._send(router, text, doubts, level)

    def _no_command(self, router: CommandRouter) -> bool:
        """Whether the parts make no whole command: none, or only a question ("Give me a
        double shot, house coffee." ... "Would a little bit of almond milk.": the rest of an
        order, misheard alone, read as a question)."""
        return not self.complete or router.services.asks(self.text)

    def _unheard_after(self, router: CommandRouter) -> bool:
        """Whether speech came after the last part that no frame heard as words (rejected as
        no speech, too short); not speech another frame took (dictation, "read it back")."""
        return self.unheard_until is not None and router.said_until <= self.spans[-1][1]

    async def _send(
        self, router: CommandRouter, text: str, doubts: list[str], level: float | None
    ) -> None:
        if self not in router.stack:
            # Gone while the stretch was heard again (nothing reaches the frames meanwhile
            # today): whatever took it away, a stop first, had the last word.
            log.warning("query gone before it was sent", text=text)
            return
        router.pop(self)
        await router.services.submit(
            self.target, text, self.correlation_id, source=self.name,
            doubt="; ".join(doubts) or None, level_db=level,
        )  # fmt: skip

    async def _heard_whole(
        self, router: CommandRouter, then: Utterance | None = None, until: float | None = None
    ) -> tuple[str, list[str], float | None] | None:
        """A command said in pieces that together make none ("May I have a," ... "Dark
        roast." ... "8 ounce, ice coffee." ... "What a lot of brown sugar."), heard again as
        one stretch of audio: alone, each piece lacked the words around it that the recogniser
        reads by. Kept when it is a whole command that names what the pieces named ("ice
        coffee" or "with milk" heard in a piece, "iced coffee" or "with lots of sweetener" in
        the whole: asked about first, the pieces quoted). Never where the pieces hold a
        "no" or take something back: those are kept as heard, as the recogniser keeps them.
        `then`: what was said next (a question, or a command heard unsure), heard with them.
        What made any of them unsure goes with the whole. `until`: heard on to there, past the
        last part, for what the parts (a whole command) did not name: None where it names
        nothing more. Returns the reading, its doubts and the level its question is answered
        at (the loudest piece heard again)."""
        services = router.services
        if self.target != "robot":
            return None
        parts = [
            Part(text, start, end, db, doubt)
            for text, (start, end), db, doubt in zip(
                self.parts, self.spans, self.levels, self.part_doubts, strict=True
            )
        ]
        if then is not None:
            parts.append(Part(then.text, then.start, then.t, then.level_db, then.doubt))
        corrects = partial(self._corrects_with, router)
        stretch = stretch_of(
            parts, services, self.silence_timeout, corrects,
            alone=until is not None, end_cut=then is None and until is None,
        )  # fmt: skip
        if stretch is None:
            return None
        said = stretch.said
        whole = await services.hear_whole(stretch.start, until or stretch.end)
        if whole is None:
            return None
        if until is not None and _takes_back(router, whole.text):
            # "Give me a dark roast latte" ... "No, wait." (rejected alone): the order is not
            # made unasked past words that may take it back; asked, with them quoted.
            log.info("heard on, words that may take it back", said=said, whole=whole.text)
            # First: the question quotes the first words heard (`Asking.check_hearing`).
            return self.text, [heard_as(whole.text), *self.doubts], stretch.level_db
        if (
            not services.is_complete(whole.text)
            or services.asks(whole.text)
            or _takes_back(router, whole.text)
        ):
            return None
        if stretch.after and self._goes_on_with(router, stretch.after, whole.text):
            return None  # a quiet "with some" after the order: its rest, refused with it
        heard, now = services.values_named(said), services.values_named(whole.text)
        if until is not None and not heard < now:
            # The parts were a whole command: only more of it is looked for, never a change.
            log.info("heard on, nothing more", said=said, whole=whole.text)
            return None
        # What made a piece unsure (a held reading, words quoted around it) still stands: the
        # stretch heard again may not hold the words the doubt quotes.
        doubts = [*stretch.doubts, *([whole.doubt] if whole.doubt else [])]
        asked = services.asks(said) or (then is not None and services.asks(normalize(then.text)))
        mended = _mends_opening(said, whole.text, services.is_complete, services.starts_with_verb)
        if not doubts and (now != heard or asked or not mended):
            # Unasked only where the whole is the pieces' own words, joined, with at most
            # their opening mended ("I won a 16 ounce." ... "Dark roast, ..." -> "I want a 16
            # ounce dark roast ..."): the cell's lists do not hold every word that matters (a
            # distance, "home", "add" against "remove"), and a question may be talk.
            doubts = [heard_as(said)]
        # The words left out of the stretch are quoted: before a pause, as words that may
        # take a command back are; a quiet end, as talk after a whole command is.
        doubts += [words_before(stretch.before)] if stretch.before else []
        doubts += [words_after(stretch.after)] if stretch.after else []
        log.info("a command said in pieces heard again whole", pieces=said, whole=whole.text,
                 doubt=doubts or None)  # fmt: skip
        return whole.text, doubts, stretch.level_db

    async def _rest_misheard(self, router: CommandRouter, utterance: Utterance) -> bool:
        """Whether `utterance`, a command of its own said while a whole order waited for its
        rest, was that rest misheard, and the order was sent heard on through it: "I'd like a
        16 ounce, dark roast, single shot, mocha with" ... "Home at home." (read as "go
        home"; the speaker said "whole milk") heard whole names more of the order's lists.
        Only words that name none of them ("give me a latte" is the next order) and begin
        with no verb of the cell ("go home" is a command of its own), said without a pause
        the room held open; only asked about, the words quoted."""
        services, start = router.services, utterance.start
        if services.values_named(utterance.text) or services.starts_with_verb(
            normalize(utterance.text)
        ):
            return False  # the next order, or a command of its own ("go home")
        if start is None or start - self.spans[-1][1] >= self.silence_timeout - CLOCK_EPSILON:
            return False  # after a pause the room held open: not the order's rest
        again = await self._heard_whole(router, then=utterance, until=utterance.t)
        if again is None:
            return False
        text, doubts, level = again
        if text == self.text:
            # Heard on, a "no", "wait" or stop is there: the order is asked about with it
            # quoted, and so are the words after it.
            await self._send(router, text, doubts, level)
            router.hear_again(_doubted(utterance, doubts[0]))
            return True
        # The question names the words taken for the order's rest.
        await self._send(router, text, [*doubts, words_after(utterance.text)], level)
        return True

    async def _sent_with_pieces(self, router: CommandRouter, utterance: Utterance) -> bool:
        """Whether `utterance`, a whole command after parts that are none, was sent heard
        again whole with the pieces of it among them, where it was heard as a question or
        unsure: "May I have a," ... "8 ounce, ice coffee." ... "What a lot of brown sugar.",
        the rest of an order heard alone as a question; "Get the triple shot." ... "Just a
        small mocha ...", held to an order with its opening misheard: the words before may
        have been its opening."""
        if utterance.doubt is None and not router.services.asks(normalize(utterance.text)):
            return False
        again = await self._heard_whole(router, utterance)
        if again is None:
            return False
        self.append(utterance.text, utterance, router)
        await self._send(router, *again)
        return True

    async def _accumulate(self, router: CommandRouter, utterance: Utterance, match: Match) -> None:
        ending = _TRAILING.match(utterance.text.strip())
        last = ending["last"].lower() if ending is not None else ""
        if last in CANCEL_WORDS:
            # "add bread, cancel" ran "add bread, then clear the assembly and go home".
            self._cancel(router, utterance, match)
            return
        if ending is not None and router.services.is_complete(normalize(ending["rest"])):
            # "add bread, go": sent now, without the word that sends it ("Go where?").
            # Its audio holds the word that sends it: never heard again whole from there.
            self.append(ending["rest"], replace(utterance, start=None), router)
            await self._submit(router)
            return
        talk = self._talk_after(router)
        if talk is not None and self._next_after_talk(router, utterance):
            log.info("a whole command after talk that followed one", sent=self.text,
                     now=utterance.text)  # fmt: skip
            await self._submit(router)
            # "add bread" ... "Don't." ... "go home": a take-back between two commands may
            # bear on either, so both are asked about with it quoted.
            router.hear_again(
                _doubted(utterance, words_before(talk)) if takes_back(talk) else utterance
            )
            return
        if self._starts_over(router, utterance):
            if await self._sent_with_pieces(router, utterance):
                return
            # Never sent: words that are no command may still hold one the interpreter acts
            # on ("put the cheese on" is "add cheese").
            log.info("words that were no command dropped", dropped=self.text, now=utterance.text)
            router.pop(self)
            lead = "Not made." if self.whole_parts else "Not understood."
            router.services.dropped(
                self.text, "no command, and a whole one followed", self.correlation_id, lead=lead
            )
            router.hear_again(utterance)
            return
        if self._may_take_back(router, utterance):
            if await self._sent_with_pieces(router, utterance):
                return
            # "No, I don't have that one." ... "Can I have a 16 ounce house coffee?": joined,
            # both were refused. The "no" may be the operator's about what follows ("Don't."
            # ... "go home", turned away) or another voice's: the command is heard on its own
            # and made only on a yes to a question that quotes the words before it.
            log.info("a whole command after words that may take it back", before=self.text,
                     now=utterance.text)  # fmt: skip
            router.pop(self)
            if self.whole_parts:
                # "I want a latte" ... "no, a large one" ... "can I have a mocha": the latte is
                # never made, and the operator hears so, not only in the mocha's question.
                router.services.dropped(
                    self.text, "taken back before another command", self.correlation_id,
                    lead="Not made.",
                )  # fmt: skip
            router.hear_again(_doubted(utterance, words_before(self.text)))
            return
        if self._asked_instead(router, utterance.text):
            # "I want a latte" ... "do you have decaf?": whether the order still stands is
            # what the question leaves open, so it is not made; the question is answered.
            log.info("a question held a whole command back", dropped=self.text, now=utterance.text)
            router.pop(self)
            router.services.dropped(
                self.text, "a question followed before it was sent", self.correlation_id,
                lead="You asked a question, so I did not act on what you said before it.",
            )  # fmt: skip
            router.hear_again(utterance)
            return
        if self._someone_else(router, utterance):
            # The kitchen's "All right." after "Make me an 8 ounce coffee." joined the order and
            # both were refused: talk that far below the operator's voice is not the operator's.
            log.info("quieter talk left a whole command as it stood", sent=self.text,
                     now=utterance.text, level_db=utterance.level_db,
                     command_db=self.level_db)  # fmt: skip
            await self._submit(router)
            router.hear_again(utterance)
            return
        if self._not_the_rest(router, utterance.text):
            if await self._rest_misheard(router, utterance):
                return
            log.info("a whole command sent as it stood", sent=self.text, now=utterance.text)
            await self._submit(router)
            router.hear_again(utterance)
            return
        self.append(utterance.text, utterance, router)

    def _starts_over(self, router: CommandRouter, utterance: Utterance) -> bool:
        """Whether, listening without a wake word, `said` is a whole command that does not
        finish the words before it, which are no command: talk nearby ran into the query, or
        the operator began again ("may have a dull shot" ... "can I have a medium house
        coffee?"); joined, both would be refused. Those words are dropped aloud, and `said` is
        heard as if they had never been. A whole command before it is never split off, nor
        words with one that bears on what follows ("Don't." ... "go home" is asked about:
        `_may_take_back`; a "no" said on its own does not bear on it: "No, no, no." ... "can I
        get a latte?"), nor words before a command without a verb of its own, which goes on
        from them ("don't put the" ... "cheese", "leave out the" ... "cheese on the left").
        With the wake word, what is said while the query is open is the operator's: one
        command."""
        return not self._bears_on_next() and self._whole_after_none(router, utterance)

    def _may_take_back(self, router: CommandRouter, utterance: Utterance) -> bool:
        """Whether, listening without a wake word for the robot, `utterance` is a whole command
        of its own after words that are none and hold one that bears on what follows ("No, I
        don't have that one.", "Don't."): at any level they may be the operator's (a quiet
        "Don't." turned away), so the command is asked about, never made unasked nor refused
        with them."""
        if self.target != "robot" or not self._bears_on_next():
            return False
        return self._whole_after_none(router, utterance)

    def _bears_on_next(self) -> bool:
        return bool(BEARS_ON_NEXT.search(self.text)) and not _ONLY_NO.fullmatch(self.text)

    def _whole_after_none(self, router: CommandRouter, utterance: Utterance) -> bool:
        """Whether, listening without a wake word, `utterance` is a whole command that starts
        anew (a verb of its own) and does not finish the words so far, which are no command."""
        if router.mode != "always" or not self.parts or self.complete:
            return False
        said = utterance.text
        services, heard = router.services, normalize(said)
        if not services.is_complete(heard) or services.continues(heard):
            return False
        return not services.is_complete(normalize(f"{self.text} {said}"))

    def _talk_after(self, router: CommandRouter) -> str | None:
        """The words said after the last whole command that made it none, when, listening
        without a wake word for the robot, the command may be asked about with them quoted:
        they name none of the cell's things, do not go on with it and do not ask (`_apart`).
        A take-back among them ("No, I don't know.", "oops, wrong one") is quoted too: the
        operator hears it and answers. None when there are none or they change the command
        ("no, make it a mocha", "and sugar": refused with it)."""
        whole = self.whole_parts
        if router.mode != "always" or self.target != "robot" or self.complete:
            return None
        if not 0 < whole < len(self.parts):
            return None
        command, rest = " ".join(self.parts[:whole]), " ".join(self.parts[whole:])
        asks = router.services.asks
        if asks(command) or asks(rest) or any(asks(part) for part in self.parts[whole:]):
            return None
        if self._corrects_with(router, rest):
            return None  # "no, add cheese": neither made nor asked about, refused with it
        return rest if self._apart(router, command, rest) else None

    def _corrects_with(self, router: CommandRouter, said: str) -> bool:
        """Whether `said` is a correction that holds a command of its own ("no, add cheese",
        "no, go home"): asked about, the command before it would be made on a yes and the
        one the operator meant lost."""
        rest = said.strip()
        found = CORRECTS.match(rest)
        if found is None:
            return False
        while found is not None and found.end() > 0:  # "no, no, go home"
            rest = rest[found.end() :].lstrip(" ,.;:!?-")
            found = CORRECTS.match(rest)
        # A whole command, not any verb: "sorry, take your time" is talk, asked about.
        return router.services.is_complete(normalize(rest))

    def _next_after_talk(self, router: CommandRouter, utterance: Utterance) -> bool:
        """Whether `utterance` is a whole command of its own heard after talk that followed
        a whole command (the caller found it: `_talk_after`) ("Make me an 8 ounce coffee." ...
        "All right." ... "Can I have a mocha?"): the first is said back, and this one is
        heard on its own (asked about too when the talk holds a take-back)."""
        services, heard = router.services, normalize(utterance.text)
        if not services.is_complete(heard) or services.continues(heard):
            return False
        if services.asks(utterance.text):
            return False  # a question holds the order back (`_starts_over`, `_asked_instead`)
        return not services.is_complete(normalize(f"{self.text} {utterance.text}"))

    def _only_talk(self, router: CommandRouter, command: str, said: str) -> bool:
        """Whether `said`, after `command`, holds nothing of the operator's about it: no
        take-back, correction or negation ("no", "wait", "oops, wrong one", "changed my
        mind"), and it is `_apart` from it."""
        return not takes_back(said) and self._apart(router, command, said)

    def _apart(self, router: CommandRouter, command: str, said: str) -> bool:
        """Whether `said` names none of the cell's things ("and sugar", "a large one", "I want
        a mocha") and does not go on with `command` ("with milk")."""
        if router.services.about_the_cell(said):
            return False
        return not self._goes_on_with(router, said, command)

    def _someone_else(self, router: CommandRouter, utterance: Utterance) -> bool:
        """Whether, listening without a wake word while a whole command waited only because
        the cell's sentences may go on from it, `utterance` is at least `FAR_TALK_DB` quieter
        than the command: another voice in the room, not the operator's addition or
        correction. The command goes as it stood and the talk is heard on its own. Not when the
        talk takes back or changes what came before (a "no", "wait", "oops, wrong one": the
        operator may have turned away), names what the cell's sentences are about ("and
        sugar", "a large one", "I want a mocha") or goes on with it ("with milk"); a take-back
        outside those words ("let me think"), said 10 dB below the order, is taken for talk,
        and the order is made."""
        if router.mode != "always" or not self.going_on:
            return False
        gap = self._louder_by(utterance)
        if gap is None or gap > -FAR_TALK_DB:
            return False
        # A quiet "no, make it a mocha" is still a take-back, "and sugar" or "with milk" the
        # order's: both refused.
        return self._only_talk(router, self.text, utterance.text)

    def _goes_on_with(self, router: CommandRouter, said: str, command: str | None = None) -> bool:
        """Whether `command` (the command so far) with `said` is a whole command or the start
        of one."""
        joined = normalize(f"{self.text if command is None else command} {said}")
        return router.services.is_complete(joined) or router.services.may_go_on(joined)

    def _louder_by(self, utterance: Utterance) -> float | None:
        """How many dB louder `utterance` was than the loudest part so far (None: a level is
        not known, as for typed words)."""
        if self.level_db is None or utterance.level_db is None:
            return None
        return utterance.level_db - self.level_db

    def _asked_instead(self, router: CommandRouter, said: str) -> bool:
        """Whether `said` is a question heard while a whole command waited to be sent (a
        question after a question is the next question)."""
        services = router.services
        if not (self.complete and services.asks(said)) or services.asks(self.text):
            return False
        return not self._goes_on_with(router, said)  # "with milk?" finishes the order

    def _not_the_rest(self, router: CommandRouter, said: str) -> bool:
        """Whether `said`, heard while a whole command waited only because the cell's
        sentences may go on from it, is the next command: a whole command of its own, no
        correction ("uh, no, make it a cappuccino"), and joined no command nor the start of
        one of the sentences ("with" ... "almond milk"). The command then goes as it stood, and
        `said` is heard on its own (without the wake word, ignored in wake mode). Anything else
        said before the silence timer joins it: an addition or a correction ("large", "a
        cappuccino instead") is refused with it, and nothing moves (which words take an order
        back is not a list anyone can finish); talk nearby or a take-back that names none of
        the cell's things ("All right.", "nah") leaves it asked about (`_talk_after`)."""
        services = router.services
        if not self.going_on or CORRECTS.match(said.strip()):
            return False
        joined = normalize(f"{self.text} {said}")
        if services.is_complete(joined) or services.may_go_on(joined):
            return False
        return services.is_complete(normalize(said))

    def _cancel(self, router: CommandRouter, utterance: Utterance, match: Match) -> None:
        router.pop(self)
        router.services.speak("Cancelled.")

    async def _submit_now(self, router: CommandRouter, utterance: Utterance, match: Match) -> None:
        if not self.parts:
            router.pop(self)
            router.services.speak("There is nothing to send.")
            return
        await self._submit(router)

    def _read(self, router: CommandRouter, utterance: Utterance, match: Match) -> None:
        router.services.speak(f"You said: {self.text}" if self.parts else "Nothing yet.")

    def unsent(self) -> str | None:
        return self.text if self.parts else None

    def help(self) -> str:
        return (
            'Say your command, then "go" or pause to send it. "Read back" repeats it, '
            '"cancel" drops it.'
        )
