"""Audio: capture, pre-roll ring buffer, VAD segmenter, wake word, speech-to-text, TTS.

Knows nothing of frames or of the robot.
"""
