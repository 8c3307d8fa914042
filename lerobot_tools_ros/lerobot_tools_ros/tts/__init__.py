# Copyright 2026 lerobot_tools_ros contributors
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

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
