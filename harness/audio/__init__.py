"""Audio for full-duplex sessions: PCM16 mono 24 kHz frames, clip I/O, resampling at the edges,
VAD, user speech (pre-rendered or espeak-ng) and the session's stereo record.

Import the submodules directly; this package re-exports nothing so that importing one part never
pulls in the others (the espeak worker script in particular must stay light).
"""

__all__: list[str] = []
