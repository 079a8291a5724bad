"""`voiced run` as a service: the daemon that owns every part of a run (`daemon`: start-up,
the one input loop, staged shutdown), what the frames may do through it (`frame_services`),
systemd's readiness and watchdog (`sdnotify`), the cell as seen from outside (`cellstatus`:
one snapshot for the page and MQTT) and the files an installed wheel prints for systemd
(`unit_files`).

May import everything else: this is where the parts are wired together. Nothing imports it
but `voiced.cli` (and `cellstatus`, a snapshot type, by the page and MQTT).
"""
