"""Each utterance's story, told from the event stream as a session emits it."""

from __future__ import annotations

from tests.page.served import tone_segment
from voiced import eventtypes as ev
from voiced.eventtypes import Record
from voiced.page.exchanges import Exchanges

STEP = {"step": 1, "composite": "add_layer", "params": {"item": "bread"}}


def interpreted(text: str, cid: str) -> Record:
    event = ev.Interpreted(text, [STEP], [STEP], None, 0.95, True, [], None, False, None, None,
                           "grammar", cid)  # fmt: skip
    return Record(event, 1.1, cid)


def tell(*records: Record) -> Exchanges:
    stories = Exchanges(keep=10)
    for record in records:
        stories.on_record(record)
    return stories


def test_a_typed_command_from_said_to_done() -> None:
    stories = tell(
        Record(ev.Utterance("add bread"), 1.0, "c1"),
        interpreted("Add bread.", "c1"),
        Record(ev.Feedback("Adding bread."), 1.2, "c1"),
        Record(ev.RunChanged("r", "planned", "add bread"), 1.2, "c1"),
        Record(ev.RunChanged("r", "completed", "add bread", "Done."), 3.0, "c1"),
    )
    (story,) = stories.stories()
    assert (story.said, story.source, story.interpretation, story.tier) == (
        "add bread", "typed", "Add bread.", "grammar")  # fmt: skip
    assert story.said_back == ("Adding bread.", "Done.") and story.outcome == "completed"


def test_a_stop_ends_its_own_story_and_withdraws_the_waiting_one() -> None:
    stories = tell(
        Record(ev.Utterance("add bread"), 1.0, "c1"),
        Record(ev.Utterance("add cheese"), 1.5, "c2"),
        Record(ev.RemoteSaid("stop", "page"), 2.0, None),
        Record(ev.Utterance("stop"), 2.0, "c3"),
        Record(ev.Dropped("add cheese", "stopped"), 2.0, "c3"),
        Record(ev.Stopped('operator said "stop"', 1, ["add cheese"]), 2.0, "c3"),
    )
    # The history's rows say the same, later: the drop is not undone by them.
    for record in (Record(ev.RunChanged("r2", "dropped", "add cheese"), 2.1, "c2"),
                   Record(ev.RunChanged("r1", "stopped", "add bread"), 2.2, "c1")):  # fmt: skip
        stories.on_record(record)
    bread, cheese, stop = stories.stories()
    assert (stop.source, stop.outcome, stop.dropped) == ("page", "stopped", ("add cheese",))
    assert (cheese.outcome, cheese.why) == ("dropped", "stopped")
    assert bread.outcome == "stopped"


def test_heard_audio_joins_its_utterance_by_speech_end() -> None:
    stories = Exchanges(keep=10)
    stories.publish(tone_segment(speech_end=1.25), None, None)
    stories.publish(tone_segment(speech_end=3.5), None, None)
    stories.on_record(Record(ev.Utterance("add meat", audio_t=3.6, speech_end=3.5), 4.0, "c1"))
    (story,) = stories.stories()
    assert story.source == "heard" and story.clip is not None and story.clip.speech_end == 3.5
    assert stories.clip(story.clip.id) is story.clip
    assert stories.clip(1) is not None  # the unclaimed one is still served while pending


def test_rejected_audio_is_a_story_of_its_own() -> None:
    stories = Exchanges(keep=10)
    stories.publish(tone_segment(speech_end=1.0), None, "no wake word")
    (story,) = stories.stories()
    assert (story.source, story.outcome, story.why) == ("rejected", "rejected", "no wake word")
    assert story.clip is not None and story.clip.wav.startswith(b"RIFF")


def test_only_the_last_keep_stories_are_kept() -> None:
    stories = Exchanges(keep=3)
    for n in range(5):
        stories.on_record(Record(ev.Utterance(f"say {n}"), float(n), f"c{n}"))
    assert [s.said for s in stories.stories()] == ["say 2", "say 3", "say 4"]


def test_where_words_came_from() -> None:
    stories = tell(
        Record(ev.Utterance("add bread", queued=4), 1.0, "c1"),
        Record(ev.Utterance("run task ab12", replay="ab12"), 2.0, "c2"),
        Record(ev.RemoteSaid("add meat", "mqtt"), 3.0, None),
        Record(ev.Utterance("add meat"), 3.0, "c3"),
        Record(ev.Utterance("add cheese"), 4.0, "c4"),
    )
    assert [s.source for s in stories.stories()] == ["queue", "replay", "mqtt", "typed"]
