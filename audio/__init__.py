"""Audio: capture, pre-roll ring buffer, VAD segmenter, wake word, speech-to-text, TTS and the
segments for the cell's page. See audio/README.md for the pipeline, the public API and the
measured figures.

Knows nothing of frames or of the robot.
"""
