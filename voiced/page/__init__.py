"""The cell's page: one local web page per daemon showing the cell live (mode, frames, link,
halt, what the arm holds, a drawing of the cell, the last commands), every utterance from
transcript to outcome with its audio, and a STOP button.

`server` serves it (stdlib asyncio, GET/HEAD plus one POST), `exchanges` follows the event
stream to tell each utterance's story, `drawing` draws the cell as SVG, `stopcheck` decides who
may press STOP, `wav` carries audio as 16-bit PCM, `settings` is the `[page]` section.
"""
