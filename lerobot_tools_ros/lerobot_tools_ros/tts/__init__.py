"""
Text-to-speech backends for the ``say`` tool, behind one small streaming interface.

- ``pocket_tts``: Kyutai's pocket-tts model (the standard ``say`` implementation of LeRobot);
  needs torch, pocket-tts and the model weights.
- ``espeak_ng``: the espeak-ng program; speaks anywhere, without weights.
- ``auto``: pocket-tts when it imports and loads, else espeak-ng with one warning.

Nothing here imports rclpy, torch or pocket-tts at import time.
"""

from .base import AudioFormat, PCM_S16LE, TtsBackend, TtsError, TtsUnavailable
from .espeak_ng import EspeakNgBackend
from .factory import backend_defaults, BACKENDS, KINDS, make_backend
from .pocket import PocketTtsBackend

__all__ = [
    'AudioFormat', 'BACKENDS', 'EspeakNgBackend', 'KINDS', 'PCM_S16LE', 'PocketTtsBackend',
    'TtsBackend', 'TtsError', 'TtsUnavailable', 'backend_defaults', 'make_backend',
]
