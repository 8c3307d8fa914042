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
A tiny random-weight pocket-tts model that loads offline, for tests and benchmarks.

The real pocket-tts weights and tokenizer live on the Hugging Face hub, which robots and CI
machines often cannot reach. ``build_tiny_model_config`` writes a YAML that pocket-tts 4.0.1
loads without any download, so its real generation code (text splitting, the flow LM, the Mimi
decoder threads, streaming and ``stop``) runs end to end. The weights are random: the audio is
noise, not speech, and the model never decides on its own that an utterance is over, so the
YAML sets a very low ``default_eos_threshold`` (end after the minimum number of frames).

The YAML is derived from the config bundled with pocket-tts (found without importing the
package, so building it is cheap), with these changes:

- no ``weights_path`` keys (pocket-tts then keeps its random initialisation);
- a local character-level ``tokenizers`` JSON: pocket-tts requires the vocabulary size to equal
  ``n_bins`` exactly, decoding must give back the text (a ``Fuse`` decoder), and its sentence
  splitter expects one token per punctuation character;
- the audio encoder (used only to turn the voice prompt into a state) is shrunk, which the
  strict config allows because only the decoder side is tied to the flow LM's latent size.

Nothing is installed and no network is used.
"""

import importlib.util
from pathlib import Path
from typing import Any

import yaml

__all__ = ['BASE_CONFIG', 'TINY_EOS_THRESHOLD', 'build_tiny_model_config', 'tiny_vocabulary']

# The smallest English model of pocket-tts 4.0.1 (0.9 M-parameter flow LM, 1 M decoder).
BASE_CONFIG = 'english_2m_2026-10.yaml'
# Random weights never emit EOS: with this threshold every frame counts as EOS, and pocket-tts
# stops a sentence after its minimum of 6 frames plus its frames-after-EOS guess (~0.7-0.9 s).
TINY_EOS_THRESHOLD = -1e9

_TOKENIZER_FILE = 'tiny_pocket_tokenizer.json'
_CONFIG_FILE = 'tiny_pocket_tts.yaml'
_UNKNOWN = '[UNK]'


def tiny_vocabulary() -> list[str]:
    """Return the tokens of the tiny tokenizer: unknown first, then printable ASCII."""
    return [_UNKNOWN] + [chr(code) for code in range(0x20, 0x7f)]


def _pocket_config_dir() -> Path:
    """Locate pocket-tts' bundled configs without importing it (that would load torch)."""
    spec = importlib.util.find_spec('pocket_tts')
    if spec is None or not spec.submodule_search_locations:
        raise ImportError(
            'pocket_tts is not installed; install torch==2.13.0 first, then pocket-tts==4.0.1 '
            '(see requirements-tts.txt)')
    return Path(list(spec.submodule_search_locations)[0]) / 'config'


def _write_tokenizer(path: Path) -> int:
    """Write a character-level tokenizer JSON and return its vocabulary size."""
    from tokenizers import decoders, models, pre_tokenizers, Regex, Tokenizer

    vocab = {token: index for index, token in enumerate(tiny_vocabulary())}
    tokenizer = Tokenizer(models.WordLevel(vocab=vocab, unk_token=_UNKNOWN))
    # Every character (space included) becomes its own token, so '.', '!' and '?' are single
    # tokens, as pocket-tts' sentence splitter expects.
    tokenizer.pre_tokenizer = pre_tokenizers.Split(Regex('.'), behavior='isolated')
    tokenizer.decoder = decoders.Fuse()
    tokenizer.save(str(path))
    return tokenizer.get_vocab_size()


def _shrink_encoder(mimi: dict[str, Any]) -> None:
    """Make the audio encoder small; its output width must stay ``mimi.inner_dim``."""
    width = 64
    mimi['seanet'].update(dimension=width, n_filters=8)
    mimi['transformer'].update(
        d_model=width, input_dimension=width, output_dimensions=[width], num_heads=2,
        num_layers=1, dim_feedforward=2 * width)


def build_tiny_model_config(
    directory: Path, *, eos_threshold: float = TINY_EOS_THRESHOLD,
) -> Path:
    """
    Write the tiny model's YAML and tokenizer into ``directory``; return the YAML path.

    Load it with ``PocketTtsBackend(config=str(path))`` or
    ``TTSModel.load_model(config=path)``. It produces noise, not speech.
    """
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    base = _pocket_config_dir() / BASE_CONFIG
    with open(base, encoding='utf-8') as stream:
        config = yaml.safe_load(stream)

    for owner in (config, config['flow_lm'], config['mimi']):
        owner.pop('weights_path', None)
        owner.pop('weights_path_without_voice_cloning', None)

    tokenizer_path = (directory / _TOKENIZER_FILE).resolve()
    vocab_size = _write_tokenizer(tokenizer_path)
    lookup = config['flow_lm']['lookup_table']
    lookup.update(tokenizer='tokenizers', tokenizer_path=str(tokenizer_path), n_bins=vocab_size)
    _shrink_encoder(config['mimi'])
    config['default_eos_threshold'] = float(eos_threshold)

    path = (directory / _CONFIG_FILE).resolve()
    with open(path, 'w', encoding='utf-8') as stream:
        stream.write('# Tiny random-weight pocket-tts model derived from %s. It produces noise,\n'
                     '# not speech; written by the test fixture tiny_pocket_model.\n' % base)
        yaml.safe_dump(config, stream, sort_keys=False, allow_unicode=True)
    return path
