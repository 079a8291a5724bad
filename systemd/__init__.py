"""The systemd unit and its service account, as package data (installed as `voiced.systemd`).

No code: this file makes the directory a package, so the unit files travel in the wheel and
`voiced print-unit` prints them where no source tree exists (voiced/service/unit_files.py).
"""
