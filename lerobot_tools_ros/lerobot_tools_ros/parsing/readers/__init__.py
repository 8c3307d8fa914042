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
Readers: the shared pieces the format families are built from. A family imports readers only.

- ``text``: whitespace, names, excerpts for messages, JSON type names;
- ``literals``: Python literals read with ``ast``, never evaluated;
- ``json_values``: where a JSON value (or literal) ends and what it is, streamed or not
  (``ReadStatus``, ``Bracket``), and the salvage of broken lists;
- ``json_calls``: JSON call objects in all their shapes, and the matcher for bare ones;
- ``pythonic_calls``: ``name(arg=value)`` calls and lists of them;
- ``typed_values``: text values typed by the catalog schema;
- ``xml_parameters``: ``<function=NAME><parameter=K>`` markup (Qwen3-Coder, Seed-OSS);
- ``invokes``: ``<invoke name=...><parameter name=...>`` markup (MiniMax-M2, Step-3, DSML);
- ``key_values``: ``<arg_key>``/``<arg_value>`` pairs (GLM, Hunyuan);
- ``tagged``: JSON calls in a family's own tokens, and sections of calls between special
  tokens (Granite, LongCat, Jamba, DeepSeek, Kimi K2, ...).

Readers import nothing from ``formats``; none of them registers anything.
"""
