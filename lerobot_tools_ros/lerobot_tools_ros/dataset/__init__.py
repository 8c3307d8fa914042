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
LeRobot datasets: language columns, episodes, replay plans and recorded events.

`language` holds upstream's schema facts (styles, row fields, Arrow types) and reads and builds
rows; `episodes` opens a v3 dataset and reads one episode's frames with pyarrow; `render`
writes calls as model text in a chosen format; `replay` turns an episode into timed
generations and matches their results; `events` turns an audit log into rows on frames and
writes them back into the dataset, through `columns` (adds rows to one episode's cells, every
other cell as it was) and `atomic` (every changed file put in place at once). pyarrow is
imported only by `episodes` and `columns`, inside the functions that read and write. All of
this is pure Python; `replay_node` is the ROS node that plays a replay plan through the runtime.
"""
