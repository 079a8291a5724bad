"""Full duplex parts: the playback timeline, the simulated room, and telling the daemon's own
words from the operator's."""

from __future__ import annotations

import numpy as np
import pytest
from voiced.audio.duplex import Audibility, Duplex, EchoGate
from voiced.audio.listener import BargeIn, Heard, Listener
from voiced.audio.ownvoice import OwnVoice, said_during, separate
from voiced.audio.playback import Playback
from voiced.audio.room import RoomEcho, RoomSettings, impulse_response
from voiced.audio.source import ArraySource
from voiced.audio.transcribe import Transcript

from tests.audio.clips import Clips, samples_of


def tone(n: int, value: int) -> np.ndarray:
    return np.full(n, value, dtype=np.int16)


def test_the_timeline_renders_what_plays_at_each_input_position() -> None:
    playback = Playback()
    first = playback.schedule("one", tone(100, 1), at=50)
    second = playback.schedule("two", tone(100, 2), at=60)  # queued behind the first
    assert (first.start, first.end, second.start, second.end) == (50, 150, 150, 250)
    assert playback.render(40, 20).tolist() == [0] * 10 + [1] * 10
    assert playback.render(140, 20).tolist() == [1] * 10 + [2] * 10
    assert [p.text for p in playback.during(0, 151)] == ["one", "two"]
    assert playback.playing(249) is second and playback.playing(250) is None


def test_a_cut_ends_the_playing_phrase_and_removes_later_ones() -> None:
    playback = Playback()
    playback.schedule("one", tone(100, 1), at=0)
    playback.schedule("two", tone(100, 2), at=0)
    touched = playback.cut(30)
    assert [p.text for p in touched] == ["one", "two"]
    assert [(p.text, p.end, p.cut) for p in playback.during(0, 1000)] == [("one", 30, True)]
    assert not playback.render(30, 200).any()
    assert playback.schedule("three", tone(10, 3), at=0).start == 30


def test_the_room_echo_is_delayed_reverberant_and_the_same_every_time() -> None:
    settings = RoomSettings(gain_db=0.0, delay_ms=25.0)
    h = impulse_response(settings)
    assert np.argmax(np.abs(h)) == 400 and h[:400].tolist() == [0.0] * 400
    reference = (8000 * np.sin(np.arange(4800) / 7)).astype(np.int16)
    silence = np.zeros(480, dtype=np.int16)

    def run() -> np.ndarray:
        room = RoomEcho(settings)
        frames = [room.mix(silence, reference[i : i + 480]) for i in range(0, 4800, 480)]
        frames += [room.mix(silence, silence) for _ in range(10)]
        return np.concatenate(frames)

    heard = run()
    assert not heard[:400].any(), "nothing before the direct path arrives"
    assert np.abs(heard[400:4800]).max() > 4000
    assert np.abs(heard[4800 + 400 + 800 :]).max() < np.abs(heard[400:4800]).max() / 10
    np.testing.assert_array_equal(heard, run())


@pytest.mark.parametrize(
    ("heard", "said", "kept", "all_own"),
    [
        ("Adding bread.", "adding bread", "", True),
        ("adding", "adding bread", "", True),
        ("add cheese", "always listen mode i will act on everything i hear", "add cheese", False),
        ("I will act add cheese", "always listen mode i will act on everything i hear",
         "add cheese", False),
        # one shared word is not enough to take it from the operator
        ("add bread", "i have bread meat cheese lettuce and tomato", "add bread", False),
        ("stop", "stopped i dropped add bread", "stop", False),
        ("computer go home", "", "computer go home", False),
    ],
)  # fmt: skip
def test_the_operators_words_are_told_from_the_daemons(
    heard: str, said: str, kept: str, all_own: bool
) -> None:
    own = separate(heard, said.split())
    assert own.text == kept and own.all_own is all_own


def test_only_the_words_playing_then_count() -> None:
    playback = Playback()
    playback.schedule('Say "start dictation" or "stop".', tone(32000, 1), at=0)
    phrases = playback.during(0, 32000)
    assert said_during(phrases, 0, 8000)[:2] == ["say", "start"]
    assert "stop" in said_during(phrases, 24000, 32000)
    assert "stop" not in said_during(phrases, 0, 8000)


def test_duplex_checks_segments_against_the_reply_with_its_echo_tail() -> None:
    playback = Playback()
    playback.schedule("Adding bread.", tone(16000, 1), at=16000)
    duplex = Duplex(playback, tail_s=0.3)
    assert duplex.own_words("adding bread", 20000, 30000).all_own
    assert duplex.own_words("bread", 32000 + 3000, 40000).all_own  # its last word, in the tail
    assert not duplex.own_words("bread", 32000 + 6000, 40000).removed  # after the tail
    frame, floor = duplex.input(tone(480, 7), 16000, 30)
    assert frame.tolist() == [7] * 480, "no room, no canceller: the input as it is"
    assert floor > 7, "but while it speaks, the operator must be louder than its echo"
    floors = [duplex.input(tone(480, 7), p, 30)[1] for p in range(32000, 40000, 480)]
    assert floors[0] > 0 and floors[-1] == 0, "its echo lingers, then the gate opens"


def test_the_echo_gate_learns_how_loud_the_daemon_arrives() -> None:
    gate = EchoGate(margin_db=6.0, initial=4.0, min_learned=3, settle_s=0.0)
    loud = tone(480, 1000)
    assert gate.floor(loud, 30) == pytest.approx(1000 * 4.0 * 10 ** (6 / 20))
    for _ in range(3):
        gate.floor(loud, 30)
        gate.learn(100.0)  # it arrives at a tenth of its level
    assert gate.coupling == pytest.approx(0.1)
    assert gate.floor(loud, 30) == pytest.approx(1000 * 0.1 * 10 ** (6 / 20))
    quiet = np.zeros(480, dtype=np.int16)
    assert gate.floor(quiet, 30) > 0, "the echo lingers for window_ms after the reply"
    for _ in range(10):
        gate.floor(quiet, 30)
    assert gate.floor(quiet, 30) == 0.0


def test_a_young_canceller_is_not_trusted_but_the_settled_floor_is_kept_for_stops() -> None:
    gate = EchoGate(margin_db=6.0, initial=4.0, min_learned=3, residual_db=-20.0, settle_s=0.3)
    loud = tone(480, 1000)
    for _ in range(3):
        gate.floor(loud, 30)
        gate.learn(10.0)  # it sounds cancelled...
    young = gate.floor(loud, 30)
    assert young == pytest.approx(1000 * 1.0 * 10 ** (6 / 20)), "...but is taken as not at all"
    assert gate.settled == pytest.approx(1000 * 0.1 * 10 ** (6 / 20)), "the converged view"
    for _ in range(6):
        gate.floor(loud, 30)
    assert gate.floor(loud, 30) == pytest.approx(gate.settled), "after settle_s it is trusted"


class Transcribes:
    """Says what the test tells it the segment was."""

    name = "fixed"

    def __init__(self, text: str) -> None:
        self.text = text

    async def load(self) -> None:
        return None

    async def transcribe(self, segment: object, bias: object, choose: object = None) -> Transcript:
        return Transcript(self.text, self.text, 0.0, 0.0, None, 0.0)


async def test_a_reply_due_while_the_operator_has_begun_is_dropped_unplayed(clips: Clips) -> None:
    operator = samples_of(clips.concat([clips.silence(1.0), clips.speech("add bread"),
                                        clips.silence(1.0)]))  # fmt: skip
    playback = Playback()
    # Decided at 0.9 s, due at 1.05 s: the operator started at 1.0 s.
    reply = playback.schedule("Always listening.", tone(16000, 3000), at=16800)
    listener = Listener(ArraySource(operator), Transcribes("add bread"),
                        duplex=Duplex(playback, 0.3), barge_in_ms=0)  # fmt: skip
    events = []
    async for event in listener.events():
        events.append(event)
        if isinstance(event, BargeIn):  # what the daemon does with it
            playback.cut(event.position)
    (barge,) = [e for e in events if isinstance(e, BargeIn)]
    assert barge.phrase == "Always listening."
    assert reply.end == reply.start, "not a sample of it was played"
    assert playback.during(0, len(operator)) == []
    assert [e.text for e in events if isinstance(e, Heard)] == ["add bread"]


async def test_a_reply_waits_out_a_blip_and_then_plays(clips: Clips) -> None:
    vowel = samples_of(clips.speech("ah"))
    loud = int(np.argmax(np.abs(vowel) > 2000))
    blip = np.concatenate([np.zeros(16000, dtype=np.int16),
                           vowel[loud : loud + 960],  # 60 ms: too short to be speech
                           np.zeros(32000, dtype=np.int16)])  # fmt: skip
    playback = Playback()
    # Due in the middle of the blip (frames are 30 ms: the blip's first frame ends at 16480).
    reply = playback.schedule("Always listening.", tone(8000, 3000), at=16640)
    listener = Listener(ArraySource(blip), Transcribes(""), duplex=Duplex(playback, 0.3),
                        barge_in_ms=0)  # fmt: skip
    events = [e async for e in listener.events()]
    assert not [e for e in events if isinstance(e, BargeIn)]
    assert reply.start > 16640 and reply.end - reply.start == 8000, "it waited, then played whole"


def test_a_keyword_stop_in_the_replys_own_words_is_its_own() -> None:
    """While the daemon says "Stopped. I dropped: ...", a keyword model may hear its "stop" in
    the echo: that is the reply's word, not the operator's."""
    playback = Playback()
    playback.schedule("Stopped. I dropped: add bread.", np.zeros(3 * 16000, dtype=np.int16), 16000)
    duplex = Duplex(playback)
    assert duplex.says_word("stop", 16000, 16000 + 8000)
    assert not duplex.says_word("halt", 16000, 16000 + 8000)
    assert not duplex.says_word("stop", 6 * 16000, 7 * 16000)  # long after the reply


def test_a_voice_that_never_reaches_the_microphone_has_no_words_in_a_transcript() -> None:
    """A headset, or a recording played to the daemon: the input is no louder while it speaks
    than while it is silent, so "can I get a" in the operator's order is the operator's, even
    while a reply saying "can I get a medium latte" plays (it had been taken out)."""
    playback = Playback()
    playback.schedule("Try: can I get a medium latte with milk.", tone(8 * 16000, 3000), 16000)
    duplex = Duplex(playback, audibility=Audibility(min_frames=5))
    order = "can I get a large mocha"
    assert duplex.own_words(order, 32000, 64000).removed, "not yet judged: taken out"
    for at in range(0, 16000, 480):  # kitchen noise, the daemon silent
        duplex.input(tone(480, 200), at, 30)
    for at in range(16000, 48000, 480):  # the same noise while it speaks: no echo in it
        duplex.input(tone(480, 200), at, 30)
    assert not duplex.audibility.heard
    assert duplex.own_words(order, 32000, 64000) == OwnVoice(order, ())
    assert not duplex.says_word("latte", 32000, 64000)


def test_a_loudspeaker_heard_at_the_microphone_keeps_its_words_apart() -> None:
    playback = Playback()
    playback.schedule("Try: can I get a medium latte with milk.", tone(8 * 16000, 3000), 16000)
    duplex = Duplex(playback, audibility=Audibility(min_frames=5))
    for at in range(0, 16000, 480):
        duplex.input(tone(480, 200), at, 30)
    for at in range(16000, 48000, 480):  # its echo doubles the input's level and more
        duplex.input(tone(480, 900), at, 30)
    assert duplex.audibility.heard
    assert duplex.own_words("can I get a large mocha", 32000, 64000).text == "large mocha"
