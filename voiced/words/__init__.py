"""What the daemon says and understands outside the grammar: plain words for protocol and
identifiers (`plain`), spoken speed changes (`speed`), undo (`undo`), the behaviours worked out
before the grammar from those two (`behaviours`), questions answered without moving
(`questions`, `counting`), replay requests (`replay`), the read-back and its revisions
(`review`), and the cell's example commands for help (`examples`).

May import: the leaves, `voiced.robot`, `voiced.rules`, `voiced.interpreter` and
`voiced.history` (what questions and replays read). Nothing of the command pipeline, the
inputs or the daemon: they use these words, not the other way round.
"""
