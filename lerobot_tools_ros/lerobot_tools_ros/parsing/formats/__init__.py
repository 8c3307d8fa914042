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
The built-in formats, one module per family, registered here in their documented order.

Each family module declares ``FAMILY = format_spec(...)`` and imports only the shared readers
(``..readers``) and the matcher API (``..answers``, ``..context``, ``..registry``,
``..results``); importing it registers nothing. ``BUILT_IN`` below is the one place that
registers them, so the order of ``FORMATS`` (the public list of names) is this tuple's order,
whatever imported what first. Adding a family: a module and one line in ``BUILT_IN``
(see docs/guides/adding-a-format.md).
"""

from . import (cohere, deepseek, deepseek_dsml, fenced, gemma, glm, granite, harmony, hermes,
               hunyuan, internlm, kimi_k2, llama, longcat, marker, minimax, mistral, openai_json,
               phi4, pythonic, qwen3_coder, reasoning, seed_oss, step3, tool_calls_tag)
from ..registry import add_format, register_reasoning

BUILT_IN = (
    marker.FAMILY,  # lerobot_marker
    openai_json.FAMILY,  # openai_json
    hermes.FAMILY,  # hermes
    llama.FAMILY,  # llama_json
    pythonic.FAMILY,  # pythonic
    mistral.FAMILY,  # mistral
    qwen3_coder.FAMILY,  # qwen3_coder_xml
    fenced.FAMILY,  # fenced_json
    deepseek.FAMILY,  # deepseek
    kimi_k2.FAMILY,  # kimi_k2
    glm.FAMILY,  # glm45
    harmony.FAMILY,  # harmony
    minimax.FAMILY,  # minimax_m2
    tool_calls_tag.FAMILY,  # tool_calls_json
    seed_oss.FAMILY,  # seed_oss
    step3.FAMILY,  # step3
    granite.FAMILY,  # granite
    gemma.FAMILY,  # gemma
    phi4.FAMILY,  # phi4_mini
    internlm.FAMILY,  # internlm
    cohere.FAMILY,  # cohere
    longcat.FAMILY,  # longcat
    hunyuan.FAMILY,  # hunyuan
    deepseek_dsml.FAMILY,  # deepseek_dsml
)

for _open, _close in reasoning.SPANS:  # the reasoning spans most families share
    register_reasoning(_open, _close)
for _family in BUILT_IN:
    add_format(_family)
