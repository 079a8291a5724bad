"""Keyword spotting: small trained heads on openWakeWord's shipped feature models.

`features` turns 16 kHz audio into 96-wide speech embeddings (mel spectrogram in numpy, the
embedding network in ONNX Runtime); `model` is a keyword head and its file; `spotter` runs heads
over a live stream. `training` makes heads from synthesised speech (`voiced train-keyword`) and
adapts them to an operator's voice (`voiced enroll`)."""
