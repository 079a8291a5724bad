"""Audio: capture, pre-roll ring buffer, VAD segmenter, wake word, speech-to-text, TTS and the
audio debug viewer. See audio/README.md for the pipeline, the public API and measured figures.

Knows nothing of frames or of the robot.
"""
