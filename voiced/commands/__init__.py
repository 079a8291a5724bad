"""The command pipeline: submitted text -> interpretation -> checked program -> controller
(`pipeline` wires it). `acceptance` interprets, plans and checks each command in order and
answers questions; `asking` reads a plan back, revises it, teaches; `execution` runs it and
tracks the scene it leaves; `faults` is the stop, SIGTERM, a run cut short and the lost link;
`reconcile` corrects the scene from the controller's report; `pausing` holds and continues
(`pause_hold`: what a pause holds); `sequence_builder` turns goals into atomic steps. The parts
share a `context`: the `belief` (the tracked and planned scenes), the `workload` (where every
command is), the `runlog` (history rows and outcomes) and what is `pending`.

May import: the leaves, `voiced.robot`, `voiced.rules`, `voiced.interpreter`, `voiced.words`,
`voiced.link`, `voiced.targets`, the configuration, the history and the event stream. Not the
frames, the inputs or the daemon: they hand commands in through `CommandPipeline`.
"""
