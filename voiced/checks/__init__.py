"""`voiced check-config` and `voiced check-cell`: every file a run would read, checked by the
loaders themselves, each problem with its line (`files`; `tomlwhere` finds the line of a key).

May import: the leaves, the configuration, `voiced.robot`, `voiced.interpreter`, and what reads
a file of its own: `voiced.inputs` (keyword models), `voiced.link` (the controller key),
`voiced.mqtt` (the broker's credentials) and the page's settings. Not the daemon.
"""
