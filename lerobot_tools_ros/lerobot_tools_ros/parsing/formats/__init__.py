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

"""The built-in formats; importing this package registers them (one module per family)."""

from . import cohere  # noqa: F401
from . import deepseek  # noqa: F401
from . import deepseek_dsml  # noqa: F401
from . import fenced  # noqa: F401
from . import gemma  # noqa: F401
from . import glm  # noqa: F401
from . import granite  # noqa: F401
from . import harmony  # noqa: F401
from . import hermes  # noqa: F401
from . import hunyuan  # noqa: F401
from . import internlm  # noqa: F401
from . import kimi_k2  # noqa: F401
from . import llama  # noqa: F401
from . import longcat  # noqa: F401
from . import marker  # noqa: F401
from . import minimax  # noqa: F401
from . import mistral  # noqa: F401
from . import openai_json  # noqa: F401
from . import phi4  # noqa: F401
from . import pythonic  # noqa: F401
from . import qwen3_coder  # noqa: F401
from . import reasoning  # noqa: F401
from . import seed_oss  # noqa: F401
from . import step3  # noqa: F401
from . import tool_calls_tag  # noqa: F401
from ..registry import FORMATS

NAMES = ('lerobot_marker', 'openai_json', 'hermes', 'llama_json', 'pythonic', 'mistral',
         'qwen3_coder_xml', 'fenced_json', 'deepseek', 'kimi_k2', 'glm45', 'harmony',
         'minimax_m2', 'tool_calls_json', 'seed_oss', 'step3', 'granite', 'gemma', 'phi4_mini',
         'internlm', 'cohere', 'longcat', 'hunyuan', 'deepseek_dsml')

for _name in NAMES:  # list them in this documented order (modules import one another)
    FORMATS[_name] = FORMATS.pop(_name)
