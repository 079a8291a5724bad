"""Making keyword models from synthesised speech: voices (`voices`, `speakers`), rooms and noise
(`rooms`), what is said (`texts`), clips and their labels (`clips`), the head's fit (`fit`), the
whole recipe (`recipe`) and adaptation to an operator's takes (`enroll`). Needs the `train`
extra; nothing here runs in the daemon."""
