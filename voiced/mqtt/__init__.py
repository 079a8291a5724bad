"""The cell on an MQTT broker: `[mqtt]` (`settings`), how to reach the broker (`connect`), the
topics and Home Assistant discovery (`topics`, pure data), the run's publisher and inbox
(`service`), and `voiced status --mqtt` (`status`).

May import: the leaves (`voiced.errors`, `voiced.configschema`), `voiced.config`, the event
stream (`voiced.events`, `voiced.eventtypes`), `voiced.service.cellstatus` and `voiced.robot`.
Nothing of the command pipeline: the cell is read from the status board and the events.
"""
