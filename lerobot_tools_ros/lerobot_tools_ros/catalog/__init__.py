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
What tools exist: the dataset's catalog, and everything that keeps it safe to use.

- ``tool_catalog``: ``ToolCatalog`` (load from ``meta/info.json``, validate arguments),
  ``DEFAULT_TOOLS``, the sample dataset;
- ``arguments``: validated arguments (``ValidatedArguments``: which schema they were checked
  against, so a tool_server in the same process need not check them again) and the copy a tool
  gets of them;
- ``schema_safety`` and ``safe_regex``: a schema from a dataset or a binding is checked at load so
  that validating model arguments against it always ends;
- ``edit``: add, remove and replace tools in a dataset's ``meta/info.json`` (atomically).

The dispatcher's reload of a running catalog is ROS wiring and lives with the dispatcher node.
"""

from lerobot_tools_ros.catalog.arguments import copy_arguments, ValidatedArguments
from lerobot_tools_ros.catalog.tool_catalog import (
    CatalogError, decode_arguments_json, DEFAULT_TOOLS, hf_lerobot_home, SAMPLE_DATASET,
    TOOL_NAME_PATTERN, ToolArgumentError, ToolCatalog)

__all__ = [
    'CatalogError', 'copy_arguments', 'decode_arguments_json', 'DEFAULT_TOOLS', 'SAMPLE_DATASET',
    'TOOL_NAME_PATTERN', 'ToolArgumentError', 'ToolCatalog', 'ValidatedArguments',
    'hf_lerobot_home',
]
