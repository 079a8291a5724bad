"""What the daemon listens to, each an async iterator of what the operator said (`sources`):
typed lines (`typed`), the audio front end (`audio`) with the recogniser's hypotheses held to
the live cell's grammar (`hearing`) and the keyword models a configuration asks for
(`keywords`), the deferred queue and replays.

May import: the leaves, `voiced.audio`, `voiced.rules`, `voiced.robot`, `voiced.interpreter`,
`voiced.frames` (the router's words: wake word, stop), `voiced.commands` (the belief the
hearing reads, the queue), the configuration and the event stream. Not the daemon.
"""
