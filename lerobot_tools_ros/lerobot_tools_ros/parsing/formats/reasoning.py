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
The reasoning span most families share: ``<think>``...``</think>``.

DeepSeek-R1/V3.1, Qwen3, GLM-4.5+, MiniMax-M2, Hunyuan, Kimi K2 Thinking, Step-3 and others
write their reasoning there (Kimi-VL Thinking as ``◁think▷``...``◁/think▷``). Serving engines
split it off before their tool parsers run, so a call written inside it is reported as a
``call_in_reasoning`` issue, never dispatched; the span's text stays in the content verbatim,
that call's markup included (as the engines return reasoning). Families
with their own markers register them in their module (``<seed:think>``, Cohere's
``<|START_THINKING|>``, Magistral's ``[THINK]``; gpt-oss ``analysis`` messages in ``harmony``).
Registers no format; ``formats`` registers these spans (``SPANS``).
"""

SPANS = (('<think>', '</think>'), ('◁think▷', '◁/think▷'))
