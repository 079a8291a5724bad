"""The controller link of a run: which controller (`controller`: the in-process simulator or the
configured one, linked and authenticated), where its key comes from (`key`), keeping it up in
the background (`keeper`), and the scene saved per controller identity (`saved_scene`).

May import: the leaves (`voiced.errors`, `voiced.configschema`), `voiced.config`,
`voiced.paths`, `voiced.history`, the event stream (`voiced.events`, `voiced.eventtypes`) and
`voiced.robot`. Nothing of the command pipeline: what a fault does to the commands is
`voiced.commands.faults`'s.
"""
