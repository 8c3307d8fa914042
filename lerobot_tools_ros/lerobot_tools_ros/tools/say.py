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
The ``say`` tool: speak text through pocket-tts or espeak-ng, streaming the audio.

Each call is one utterance with its own ``utterance_id``. Audio leaves as soon as the backend
yields it, so the robot starts talking while the rest is still being generated; under ROS it is
published as ``lerobot_tools_interfaces/msg/AudioChunk`` on ``audio_topic`` (the ``speaker``
node plays it), in plain Python it goes to the ``on_chunk`` callback. The utterance always ends
with a chunk that has ``final`` set, and also ``cancelled`` when it was cut short, so a speaker
can drop what it still has queued.

Under ROS a call lasts until its audio has been heard: it ends when the speaker reports the
utterance ``finished`` (the result says how many seconds were played, and where), ``dropped``
(``execution_failed`` with the speaker's reason) or cut off. So whatever stops the call stops
the sound: a cancelled ``CallContext`` (a ``RunTool`` goal's cancel, which is how the
dispatcher's pause, ``~/cancel`` and timeout and an MCP client's cancel arrive) stops
synthesis, tells the speaker to drop the utterance (silent within one of its blocks) and ends
the call ``cancelled``, saying how much was played. There is no fire-and-forget mode: audio
nobody waits for could not be stopped by a pause. Without a speaker on the graph a call ends
``unavailable`` (after up to 3 s for one to be discovered).

Progress (``CallContext.feedback``, the ``RunTool`` feedback): ``synthesizing`` while the
backend generates, ``playing`` once the speaker plays it, with the speaker's own frame counts
(handed to the device or file, over the total once known: what is really heard);
``queued`` while it waits for other speech (``while_speaking``).

Other speech: calls of one tool run one at a time and each lasts until heard, so a second call
waits for the first (in the dispatcher's per-tool queue, or tool_server's); the dispatcher's
``tool.say.when_busy`` can make a second call replace the first or be refused instead.
``while_speaking``
decides what a call does when the speaker is still playing something else when it starts
(another ``say`` node sharing the speaker, any other AudioChunk publisher): ``queue`` (wait until
it has been played, then speak), ``replace`` (cut it off, then speak; a ``say`` waiting on it
ends ``cancelled``) or ``refuse`` (end ``busy`` at once, nothing spoken).

``~/stop`` cuts the current utterance short and releases its call at once (``stopped``);
a speaker that leaves the graph while a call waits ends the wait with ``unavailable`` (a clean
exit at once, a crash when DDS notices it: the participant's lease, about 20 s with Fast DDS's
defaults). A speaker that reports nothing for ``playback_timeout_s`` beyond the utterance's own
length ends the call ``timeout`` (and the utterance is cut off).

Streamed calls (the dispatcher's ``stream_speech``): when the call's context has a
``text`` stream, ``text`` arrives in whole sentences or clauses while the call runs; each is
synthesized as it comes, into the one utterance (one ``final`` chunk at its end), so the robot
starts talking while the policy is still writing. A cancel stops it as above, between or inside
segments; ``max_chars`` applies to the text as it grows.

The backend is built, and warmed up, in the constructor: pocket-tts loads its model once, so
the first call is as fast as the others. Calls of one instance run one at a time (the
``tool_server`` serializes them; pocket-tts is not thread-safe per model anyway).
"""

import collections
import contextlib
from dataclasses import dataclass, field
import logging
import math
import threading
import time
from typing import Any, Callable, ClassVar, Optional
import uuid

from lerobot_tools_ros import errors
from lerobot_tools_ros.audio import Chunk as AudioPiece
from lerobot_tools_ros.errors import ToolError
from lerobot_tools_ros.parameters.spec import MAX_SECONDS
from lerobot_tools_ros.tools.base import CallContext, tool_name_from_schema, ToolParameter
from lerobot_tools_ros.tools.host import bound, Qos, ToolHost
from lerobot_tools_ros.tts import KINDS, make_backend, TtsError
from lerobot_tools_ros.untrusted import log_text, ros_string

__all__ = ['AudioPiece', 'SayTool']

_log = logging.getLogger('lerobot_tools_ros.tools.say')
# How long a call waits for a speaker to show up before it answers `unavailable` (discovery of a
# freshly started speaker takes a few hundred ms, over a second on a loaded machine).
_SUBSCRIBER_GRACE_S = 3.0
# What this tool exchanges with the graph, through its host (tools/host.py).
AUDIO_CHUNK = 'lerobot_tools_interfaces/msg/AudioChunk'      # published: the utterance's audio
SPEAKER_STATUS = 'lerobot_tools_interfaces/msg/SpeakerStatus'  # subscribed: what is played
TRIGGER = 'std_srvs/srv/Trigger'                               # served: ~/stop
_AUDIO_QOS = Qos(depth=200)
_STATUS_QOS = Qos(depth=50)
_POLL_S = 0.05  # how often a waiting call looks at progress, cancel and the graph
_FEEDBACK_PERIOD_S = 0.1
_CANCEL_REPORT_S = 1.0  # how long a cancelled call waits for the speaker's account of it
_LAST_STATUS_GRACE_S = 2.0  # a speaker that exited cleanly may have reported the end just now
# Another utterance counts as playing while the speaker reported it `playing` within this long
# (it reports progress every progress_period_s, 0.1 s by default, while one plays).
_OTHER_SPEECH_STALE_S = 2.0
_END_STATES = ('finished', 'dropped', 'cancelled')
STAGE_QUEUED = 'queued'  # RunTool feedback stages (RunTool.Feedback.STAGE_*)
STAGE_SYNTHESIZING = 'synthesizing'
STAGE_PLAYING = 'playing'
WHILE_SPEAKING = ('queue', 'replace', 'refuse')


class _EitherEvent(threading.Event):
    """Set when it is set itself or when ``other`` is (backends only poll ``is_set``)."""

    def __init__(self, other: threading.Event) -> None:
        super().__init__()
        self._other = other

    def is_set(self) -> bool:
        return super().is_set() or self._other.is_set()


@dataclass
class _Utterance:
    """A call in progress; ``stop`` and the speaker's reports reach it from the ROS thread."""

    uid: str
    stop: threading.Event
    final_sent: bool = False
    waiting: bool = False
    changed: threading.Event = field(default_factory=threading.Event)
    state: str = ''
    detail: str = ''
    frames_played: int = 0
    frames_total: int = 0
    sample_rate: int = 0
    released: str = ''  # why ~/stop or close() ended the wait


class _HeldWarnings:
    """Keep warnings from construction until we know the logger (the node's, if any)."""

    def __init__(self) -> None:
        self._messages: list[str] = []
        self._lock = threading.Lock()

    def warning(self, message: str) -> None:
        with self._lock:
            self._messages.append(message)

    def flush(self, logger: Any) -> None:
        with self._lock:
            messages, self._messages = self._messages, []
        for message in messages:
            logger.warning(message)


def _eos_threshold(value: Any) -> Optional[float]:
    """Parse ``eos_threshold``: '' means the backend's default, else a number."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, bool):
        raise ValueError(f'say: eos_threshold must be empty or a number, got {value!r}')
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"say: eos_threshold must be empty (the model's default) or a "
                         f'number such as -4.0, got {value!r}') from None
    if math.isnan(number):
        raise ValueError('say: eos_threshold must be a number, got NaN')
    return number


def _check_parameters(backend: str, max_chars: Any, playback_timeout_s: Any,
                      while_speaking: Any, topics: dict[str, Any]) -> None:
    """Raise ValueError naming the first bad parameter."""
    if backend not in KINDS:
        raise ValueError(f'say: backend must be one of {", ".join(KINDS)}, got {backend!r}')
    if while_speaking not in WHILE_SPEAKING:
        raise ValueError(f'say: while_speaking must be one of {", ".join(WHILE_SPEAKING)}, '
                         f'got {while_speaking!r}')
    if isinstance(max_chars, bool) or not isinstance(max_chars, int) or max_chars < 1:
        raise ValueError(f'say: max_chars must be a positive integer, got {max_chars!r}')
    if isinstance(playback_timeout_s, bool) or not isinstance(
            playback_timeout_s, (int, float)) or not playback_timeout_s > 0:
        raise ValueError(f'say: playback_timeout_s must be a positive number of seconds, '
                         f'got {playback_timeout_s!r}')
    for label, topic in topics.items():
        if not isinstance(topic, str) or not topic.strip():
            raise ValueError(f'say: {label} must be a topic name, got {topic!r}')


def _backend_options(backend: str, *, voice: str, rate: int, language: str, config: str,
                     quantize: bool, threads: int, eos_threshold: Any) -> dict[str, Any]:
    """Keyword arguments of ``make_backend`` for the chosen backend (both for ``auto``)."""
    pocket = {'language': language, 'config': config, 'voice': voice,
              'quantize': quantize, 'threads': threads,
              'eos_threshold': _eos_threshold(eos_threshold)}
    espeak = {'rate': rate, 'voice': voice or 'en-us'}
    if backend == 'auto':
        espeak['voice'] = 'en-us'
        return {'pocket_tts': pocket, 'espeak_ng': espeak}
    return pocket if backend == 'pocket_tts' else espeak


class SayTool:
    """Speak ``text`` aloud; see the module docstring."""

    STREAMS_TEXT: ClassVar[bool] = True  # speaks a streamed call's segments as they arrive

    PARAMETERS: ClassVar[dict[str, ToolParameter]] = {
        'backend': ToolParameter(
            'auto', 'Text-to-speech backend: auto (pocket-tts if it loads, else espeak-ng), '
                    'pocket_tts or espeak_ng.', choices=KINDS,
            why='the backend is built and warmed up when tool_server starts'),
        'voice': ToolParameter(
            '', 'pocket_tts: a built-in voice name or a .safetensors/audio file (empty: a '
                'silent prompt, no download); espeak_ng: a voice such as en-us+f3 (empty: '
                'en-us). With backend auto it applies to pocket-tts only.'),
        'rate': ToolParameter(175, 'espeak_ng speaking rate in words per minute.', minimum=80,
                              maximum=450),
        'language': ToolParameter(
            'english', 'pocket_tts language of the bundled model configs (ignored when '
                       'config is set).'),
        'config': ToolParameter(
            '', 'pocket_tts model YAML (local weights, or an offline test model); '
                'overrides language.'),
        'quantize': ToolParameter(False, 'pocket_tts: int8-quantize the model (faster on CPU).'),
        'threads': ToolParameter(
            0, "pocket_tts: torch threads for the whole process (0 keeps pocket-tts' 1).",
            minimum=0, maximum=1024),
        # '' or a number (-4.0): a string parameter that also takes numbers.
        'eos_threshold': ToolParameter(
            '', "pocket_tts end-of-speech threshold: a number, or '' for the model's default.",
            also=('float',), minimum=-1e10, maximum=1e10),
        'max_chars': ToolParameter(500, 'Longest text accepted, in characters.', minimum=1,
                                   maximum=1_000_000, live=True),
        'while_speaking': ToolParameter(
            'queue', 'What a call does when the speaker is still playing other speech (another '
                     'say node, any AudioChunk publisher): queue (wait until it was played, '
                     'then speak), replace (cut it off, then speak) or refuse (answer busy, '
                     'speak nothing). Calls of this tool never overlap: each lasts until heard '
                     "and the next waits for it (the dispatcher's tool.say.when_busy decides "
                     'that one).', choices=WHILE_SPEAKING, live=True),
        'playback_timeout_s': ToolParameter(
            30.0, "Seconds to wait for the speaker beyond the utterance's own duration "
                  '(and beyond other speech it waits for) before the call ends timeout and '
                  'the utterance is cut off.', above=0.0, maximum=MAX_SECONDS, live=True),
        'audio_topic': ToolParameter('speaker/audio', 'Topic the AudioChunk messages go to.'),
        'status_topic': ToolParameter(
            'speaker/status', "Topic of the speaker's SpeakerStatus reports."),
    }

    def __init__(self, schema: dict, *, backend: str = 'auto', voice: str = '',
                 rate: int = 175, language: str = 'english', config: str = '',
                 quantize: bool = False, threads: int = 0, eos_threshold: Any = None,
                 max_chars: int = 500, while_speaking: str = 'queue',
                 playback_timeout_s: float = 30.0, audio_topic: str = 'speaker/audio',
                 status_topic: str = 'speaker/status',
                 on_chunk: Optional[Callable[[AudioPiece], None]] = None,
                 logger: Any = None) -> None:
        """
        Check the parameters, build the backend and warm it up.

        ``on_chunk`` receives every ``AudioPiece`` (with or without ROS). ``logger`` (stdlib
        or rclpy) gets the one warning ``auto`` gives when it falls back to espeak-ng; without
        one, that warning goes to the hosting node's logger in ``bind``, or to the stdlib
        logger at the first call when there is no node.
        Raises ValueError for a bad parameter or a backend that cannot run here.
        """
        self.schema = schema
        self.name = tool_name_from_schema(schema)
        _check_parameters(backend, max_chars, playback_timeout_s, while_speaking,
                          {'audio_topic': audio_topic, 'status_topic': status_topic})
        self.max_chars = max_chars
        self.while_speaking = while_speaking
        self.playback_timeout_s = float(playback_timeout_s)
        self.audio_topic = audio_topic
        self.status_topic = status_topic
        self._on_chunk = on_chunk
        self._lock = threading.Lock()
        self._active: dict[str, _Utterance] = {}
        self._last_uid = ''
        # What the speaker reports playing (any source): utterance -> when last seen playing.
        self._speaker_playing: dict[str, float] = {}
        # Our utterances whose calls ended: stopped or cut off, never "other speech" (the
        # speaker's account of a cancel may come after the call gave up waiting for it).
        self._ended_here: collections.deque = collections.deque(maxlen=64)
        self._speaker_changed = threading.Event()
        self._publisher: Any = None
        self._message_type: Any = None
        self._host: ToolHost | None = None
        self._gave_up_on: frozenset | None = None  # a graph whose subscribers never all matched
        self._closed = False
        self._held = _HeldWarnings()
        self.backend = self._build_backend(backend, logger, _backend_options(
            backend, voice=voice, rate=rate, language=language, config=config,
            quantize=quantize, threads=threads, eos_threshold=eos_threshold))

    def _build_backend(self, backend: str, logger: Any, options: dict[str, Any]) -> Any:
        """Make the backend and warm it up; ValueError when it cannot run here."""
        try:
            built = make_backend(backend, logger=logger or self._held, **options)
        except TtsError as exc:
            raise ValueError(f'say: backend {backend} cannot run here: {exc}') from exc
        try:
            built.warm_up()
        except TtsError as exc:
            built.close()
            raise ValueError(f'say: {built.name} failed its warm-up: {exc}') from exc
        return built

    # ------------------------------------------------------------------------------ ROS
    def bind(self, host: ToolHost) -> None:
        """Create the AudioChunk publisher, the status subscription and ``~/stop``."""
        self._host = host
        self._message_type = host.message_type(AUDIO_CHUNK)
        self._publisher = host.publisher(AUDIO_CHUNK, self.audio_topic, _AUDIO_QOS)
        self._status_subscription = host.subscription(
            SPEAKER_STATUS, self.status_topic, self._on_status, _STATUS_QOS)
        self._stop_service = host.service(TRIGGER, '~/stop', self._on_stop)
        logger = host.logger()
        self._held.flush(logger)
        logger.info(
            f'say: {self.backend.name} at {self.backend.sample_rate} Hz x'
            f'{self.backend.channels} -> {self._publisher.topic_name}; stop with '
            f"{host.resolve_service_name('~/stop')}")

    def _on_status(self, message: Any) -> None:
        with self._lock:
            if message.state in _END_STATES:
                self._speaker_playing.pop(message.utterance_id, None)
            else:
                self._speaker_playing[message.utterance_id] = time.monotonic()
            self._speaker_changed.set()
            utterance = self._active.get(message.utterance_id)
            if utterance is None or utterance.state in _END_STATES:
                return
            utterance.state = message.state
            utterance.detail = message.detail
            utterance.frames_played = message.frames_played
            utterance.frames_total = message.frames_total
            utterance.sample_rate = message.sample_rate
        utterance.changed.set()

    def _on_stop(self, request: Any, response: Any) -> Any:
        response.success, response.message = self.stop()
        return response

    def _speaker_publishers(self) -> set[tuple[int, ...]]:
        """Identify the speakers now on the graph (their status publishers' GIDs)."""
        topic = self._status_subscription.topic_name
        return {info.gid for info in bound(self._host, self.name).publishers_of(topic)}

    def _unmatched_graph(self) -> frozenset | None:
        """
        Return None when we and every speaker hear each other, else the graph's endpoints (GIDs).

        Each speaker's node subscribes to our audio topic, our publisher has matched every
        audio subscriber the graph shows, and our status subscription every status publisher
        (a status sent before that match is lost, and a call would wait for an end it missed).
        """
        host = bound(self._host, self.name)
        status = host.publishers_of(self._status_subscription.topic_name)
        listeners = host.subscriptions_of(self._publisher.topic_name)
        listening = {info.node for info in listeners}
        if (all(info.node in listening for info in status)
                and self._publisher.get_subscription_count() >= len(listeners)
                and self._status_subscription.get_publisher_count() >= len(status)):
            return None
        return frozenset(info.gid for info in (*status, *listeners))

    # ------------------------------------------------------------------------------ calls
    def stop(self) -> tuple[bool, str]:
        """
        Cut the current utterance short; returns (something was stopped, what).

        While the backend generates, generation ends and the final chunk says
        ``cancelled``. Once everything is sent, a ``cancelled`` chunk is sent again so the
        speaker stops playing it; a speaker that already finished ignores it. A call waiting
        for playback is released at once.
        """
        with self._lock:
            active = list(self._active.values())
            last = self._last_uid
            sent = []
            for utterance in active:
                utterance.stop.set()
                utterance.released = 'stopped by ~/stop'
                if utterance.final_sent:
                    sent.append(utterance.uid)
        for utterance in active:
            utterance.changed.set()
        for uid in sent:
            self._emit(self._piece(uid, b'', final=True, cancelled=True))
        if active:
            return True, 'stopped utterance ' + ', '.join(u.uid for u in active)
        if last:
            self._emit(self._piece(last, b'', final=True, cancelled=True))
            return True, f'nothing is being generated; asked the speaker to stop {last}'
        return False, 'nothing has been said yet'

    def call(self, arguments: dict, context: Optional[CallContext] = None) -> dict:
        """Speak ``arguments['text']``; return what was said, how long, how much was heard."""
        context = context or CallContext()
        if context.text is not None:  # streamed: the text arrives in segments
            if self._closed:
                raise ToolError(errors.UNAVAILABLE, 'say: the tool is shut down')
            texts = context.text.pieces(context.cancelled)
        else:
            texts = (self._check_text(arguments),)
        if context.cancelled.is_set():
            raise ToolError(errors.CANCELLED, 'say: cancelled before it started')
        self._held.flush(_log)
        waiting = self._publisher is not None  # plain Python: on_chunk takes the audio
        speakers = self._require_speaker() if waiting else set()
        waited_s = self._take_turn(context) if waiting else 0.0
        utterance = _Utterance(uid=uuid.uuid4().hex, stop=_EitherEvent(context.cancelled),
                               waiting=waiting)
        with self._lock:
            self._active[utterance.uid] = utterance
            self._last_uid = utterance.uid
        # The speaker is told in the thread that cancels, the moment it does (synthesis may be
        # mid-frame, and a thread woken to notice would add its scheduling delay).
        forget_cancel = context.on_cancel(lambda: self._tell_cancelled(utterance))
        try:
            result = self._speak(texts, utterance, context)
            if waited_s:
                result['waited_for_other_speech_s'] = round(waited_s, 3)
            if context.cancelled.is_set():
                self._cancelled(utterance, result)
            # A stop during generation cancels the utterance; the speaker may never have seen
            # it, so there is no playback to wait for.
            if waiting and not result.get('stopped'):
                self._await_playback(utterance, result, context, speakers)
            return result
        finally:
            forget_cancel()
            with self._lock:
                self._active.pop(utterance.uid, None)
                self._ended_here.append(utterance.uid)
                self._speaker_playing.pop(utterance.uid, None)

    def _other_speech(self) -> list[str]:
        """Utterances the speaker is playing now that are not this tool's calls in progress."""
        now = time.monotonic()
        with self._lock:
            for uid, seen in list(self._speaker_playing.items()):
                if now - seen > _OTHER_SPEECH_STALE_S:  # no report for a while: not playing
                    del self._speaker_playing[uid]
            return sorted(uid for uid in self._speaker_playing
                          if uid not in self._active and uid not in self._ended_here)

    def _take_turn(self, context: CallContext) -> float:
        """
        Apply ``while_speaking`` to speech already playing; return the seconds waited.

        Raises ToolError ``busy`` (refuse) or ``cancelled`` (cancelled while waiting).
        """
        others = self._other_speech()
        if not others:
            return 0.0
        names = log_text(', '.join(others), 300)  # ids from the speaker's reports
        if self.while_speaking == 'refuse':
            raise ToolError(errors.BUSY, (
                f'say: the speaker is still playing utterance {names}, so '
                'nothing was spoken (tool.say.while_speaking is refuse; queue waits for it, '
                'replace cuts it off)'))
        if self.while_speaking == 'replace':
            # The speaker takes chunks in order: these cut the others off before our audio
            # arrives, whoever sent them.
            for uid in others:
                self._emit(self._piece(uid, b'', final=True, cancelled=True))
            return 0.0
        started = time.monotonic()
        context.feedback(STAGE_QUEUED, -1.0,
                         f'waiting for the speaker to finish utterance {names}')
        while others:
            if context.cancelled.is_set():
                raise ToolError(errors.CANCELLED, (
                    'say: cancelled while waiting for the speaker to finish other speech '
                    f'({names}); nothing of it was spoken'))
            if self._closed:
                raise ToolError(errors.UNAVAILABLE, 'say: the tool is shut down')
            self._speaker_changed.wait(_POLL_S)
            self._speaker_changed.clear()
            others = self._other_speech()
        return time.monotonic() - started

    def _tell_cancelled(self, utterance: _Utterance) -> None:
        """Tell the speaker to drop the utterance (runs in the cancelling thread)."""
        try:
            self._emit(self._piece(utterance.uid, b'', final=True, cancelled=True))
        finally:
            utterance.changed.set()

    def _check_text(self, arguments: Any) -> str:
        text = arguments.get('text') if isinstance(arguments, dict) else None
        if not isinstance(text, str):
            raise ToolError(errors.INVALID_ARGUMENTS,
                            f'say needs "text", a string; got {type(text).__name__}')
        if not text.strip():
            raise ToolError(errors.INVALID_ARGUMENTS,
                            'say: "text" is empty; give the words to speak')
        if len(text) > self.max_chars:
            raise ToolError(errors.INVALID_ARGUMENTS,
                            f'say: "text" has {len(text)} characters; at most {self.max_chars} '
                            'are accepted (parameter tool.say.max_chars); split it into '
                            'several calls')
        if self._closed:
            raise ToolError(errors.UNAVAILABLE, 'say: the tool is shut down')
        return text.strip()

    def _speak(self, texts: Any, utterance: _Utterance, context: CallContext) -> dict:
        """Synthesize each text of ``texts`` (one, or a streamed call's segments) in turn."""
        started = time.perf_counter()
        first_ms: Optional[float] = None
        nbytes = 0
        frame = 2 * self.backend.channels
        next_feedback = 0.0
        spoken = []
        context.feedback(STAGE_SYNTHESIZING, -1.0, '')
        try:
            for text in texts:
                if utterance.stop.is_set():
                    break
                spoken.append(text)
                if sum(map(len, spoken)) > self.max_chars:
                    raise ToolError(errors.INVALID_ARGUMENTS, (
                        f'say: the streamed "text" grew past {self.max_chars} characters '
                        '(parameter tool.say.max_chars); the rest was not spoken'))
                if not text.strip():
                    continue
                with contextlib.closing(self.backend.synthesize(text.strip(),
                                                                utterance.stop)) as chunks:
                    for data in chunks:
                        if not data:
                            continue
                        self._emit(self._piece(utterance.uid, data))
                        if first_ms is None:
                            first_ms = (time.perf_counter() - started) * 1e3
                        nbytes += len(data)
                        if time.monotonic() >= next_feedback:
                            next_feedback = time.monotonic() + _FEEDBACK_PERIOD_S
                            context.feedback(*self._heard(
                                utterance, nbytes / frame / self.backend.sample_rate))
        except ToolError:
            self._finish(utterance, cancelled=True)
            raise
        except Exception as exc:  # noqa: B902 - any backend failure becomes the call's error
            self._finish(utterance, cancelled=True)
            reason = str(exc) if isinstance(exc, TtsError) else f'{type(exc).__name__}: {exc}'
            raise ToolError(errors.EXECUTION_FAILED,
                            f'say: {self.backend.name} failed: {reason}') from exc
        stopped = utterance.stop.is_set()
        self._finish(utterance, cancelled=stopped)
        result: dict[str, Any] = {
            'utterance_id': utterance.uid,
            'backend': self.backend.name,
            'audio_seconds': round(nbytes / frame / self.backend.sample_rate, 3),
            'first_chunk_ms': round(first_ms, 1) if first_ms is not None else None,
        }
        if context.text is not None:
            result['streamed_segments'] = len(spoken)
            result['text'] = ''.join(spoken)
        if stopped:
            result['stopped'] = True
        return result

    @staticmethod
    def _heard(utterance: _Utterance, synthesized_s: float) -> tuple[str, float, str]:
        """Feedback while synthesis goes on: once the speaker plays it, what is heard."""
        if not utterance.frames_played or not utterance.sample_rate:
            return STAGE_SYNTHESIZING, -1.0, f'{synthesized_s:.2f} s synthesized'
        played = utterance.frames_played / utterance.sample_rate
        return (STAGE_PLAYING, -1.0,
                f'{played:.2f} s played, {synthesized_s:.2f} s synthesized so far')

    def _finish(self, utterance: _Utterance, *, cancelled: bool) -> None:
        self._emit(self._piece(utterance.uid, b'', final=True, cancelled=cancelled))
        with self._lock:
            utterance.final_sent = True
            # A stop that came between the two lines above saw final_sent still false.
            missed_stop = utterance.stop.is_set() and not cancelled
        if missed_stop:
            self._emit(self._piece(utterance.uid, b'', final=True, cancelled=True))

    def _cancelled(self, utterance: _Utterance, result: dict) -> None:
        """End a cancelled call: wait briefly for the speaker's account, then raise."""
        self._emit(self._piece(utterance.uid, b'', final=True, cancelled=True))
        played = ''
        if self._publisher is not None and self._publisher.get_subscription_count():
            deadline = time.monotonic() + _CANCEL_REPORT_S
            while utterance.state not in _END_STATES and time.monotonic() < deadline:
                utterance.changed.wait(_POLL_S)
                utterance.changed.clear()
            if utterance.state in _END_STATES and utterance.sample_rate:
                played = f'; {self._played(utterance, result)} had been played'
                result['played_s'] = round(utterance.frames_played / utterance.sample_rate, 3)
        raise ToolError(errors.CANCELLED,
                        f'say: cancelled after {result["audio_seconds"]} s of audio was '
                        f'synthesized{played}')

    def _require_speaker(self) -> set[tuple[int, ...]]:
        """
        Fail fast when no speaker could ever report playback; return the speakers there.

        A speaker is then waited for until our publisher has matched its audio subscription
        too (``_await_matched``), within the same _SUBSCRIBER_GRACE_S.
        """
        deadline = time.monotonic() + _SUBSCRIBER_GRACE_S
        topic = self._status_subscription.topic_name
        while True:
            speakers = self._speaker_publishers()
            if speakers and self._publisher.get_subscription_count():
                self._await_matched(deadline)
                return speakers
            if time.monotonic() > deadline:
                raise ToolError(errors.UNAVAILABLE,
                                f'say: no speaker is running (nothing publishes {topic}), so '
                                'nothing would be heard; start it with `ros2 run '
                                'lerobot_tools_ros speaker`')
            time.sleep(0.02)

    def _await_matched(self, deadline: float) -> None:
        """
        Wait (until ``deadline``) until our audio reaches every speaker on the graph.

        The graph can show a speaker before DDS matched our publisher to its subscription, and
        audio published then never reaches it: the file and the robot would miss the start of
        the utterance (while a waiting call reports it played). A graph where some subscriber
        never matches (an incompatible QoS) is waited for once, not on every call.
        """
        while True:
            graph = self._unmatched_graph()
            if graph is None or graph == self._gave_up_on:
                return
            if time.monotonic() > deadline:
                self._gave_up_on = graph
                return
            time.sleep(0.02)

    def _await_playback(self, utterance: _Utterance, result: dict, context: CallContext,
                        speakers: set[tuple[int, ...]]) -> None:
        limit = result['audio_seconds'] + self.playback_timeout_s
        deadline = time.monotonic() + limit
        reported = (-1, -1)
        while utterance.state not in _END_STATES:
            if utterance.released:
                result.update(stopped=True, playback='stopped', playback_detail=utterance.released,
                              played_s=round(self._played_s(utterance), 3))
                return
            if context.cancelled.is_set():
                self._cancelled(utterance, result)
            if not speakers & self._speaker_publishers() and not self._end_comes(utterance):
                raise ToolError(errors.ANSWER_LOST, (
                    f'say: the speaker left the graph before utterance {utterance.uid} '
                    f'finished playing (it stopped or crashed); it had reported '
                    f'{self._played_s(utterance):.2f} s played (its own count), more may have '
                    'been heard'), errors.UNKNOWN)
            now = time.monotonic()
            if not utterance.state and self._other_speech():
                deadline = max(deadline, now + limit)  # the speaker plays other speech first
            if now > deadline:
                # A call that ends leaves nothing playing behind it.
                self._emit(self._piece(utterance.uid, b'', final=True, cancelled=True))
                raise ToolError(errors.TIMEOUT,
                                f'say: the speaker did not report utterance {utterance.uid} '
                                f'finished within {limit:.1f} s (its {result["audio_seconds"]} '
                                f's of audio plus playback_timeout_s '
                                f'{self.playback_timeout_s:g}), so it was cut off; '
                                f'{self._played_s(utterance):.2f} s had been played')
            progress = (utterance.frames_played, utterance.frames_total)
            if progress != reported and utterance.sample_rate:
                reported = progress
                total = utterance.frames_total
                context.feedback(STAGE_PLAYING, min(1.0, progress[0] / total) if total else -1.0,
                                 f'{progress[0] / utterance.sample_rate:.2f} s played')
            utterance.changed.wait(_POLL_S)
            utterance.changed.clear()
        self._playback_result(utterance, result, context)

    @staticmethod
    def _end_comes(utterance: _Utterance) -> bool:
        """Give a speaker that just left a moment: its last status may still be on its way."""
        deadline = time.monotonic() + _LAST_STATUS_GRACE_S
        while utterance.state not in _END_STATES and time.monotonic() < deadline:
            utterance.changed.wait(_POLL_S)
            utterance.changed.clear()
        return utterance.state in _END_STATES

    @staticmethod
    def _played_s(utterance: _Utterance) -> float:
        """Seconds of the utterance the speaker handed to its device or file."""
        if not utterance.sample_rate:
            return 0.0
        return utterance.frames_played / utterance.sample_rate

    def _played(self, utterance: _Utterance, result: dict) -> str:
        """'<played> s of <total> s', from the speaker's frame counts."""
        total = (utterance.frames_total / utterance.sample_rate
                 if utterance.frames_total and utterance.sample_rate
                 else result['audio_seconds'])
        return f'{self._played_s(utterance):.2f} s of {total:.2f} s'

    def _playback_result(self, utterance: _Utterance, result: dict,
                         context: CallContext) -> None:
        result['playback'] = utterance.state
        if utterance.state == 'finished':
            played = self._played_s(utterance) if utterance.sample_rate else (
                result['audio_seconds'])
            result['played_s'] = round(played, 3)
            context.feedback(STAGE_PLAYING, 1.0, f'{played:.2f} s played')
            if utterance.detail:
                result['playback_detail'] = utterance.detail
            return
        if utterance.state == 'cancelled' or utterance.stop.is_set():
            if context.cancelled.is_set():
                self._cancelled(utterance, result)
            result['played_s'] = round(self._played_s(utterance), 3)
            if utterance.stop.is_set():  # ~/stop or shutdown: what the operator asked for
                result['stopped'] = True
                return
            raise ToolError(errors.CANCELLED, (
                f'say: the speaker cut utterance {utterance.uid} off after '
                f"{self._played(utterance, result)}, not at this call's request (the "
                "speaker's ~/stop, or a say with while_speaking replace): "
                f'{log_text(utterance.detail, 300)}'))
        result['played_s'] = round(self._played_s(utterance), 3)
        raise ToolError(errors.EXECUTION_FAILED,
                        f'say: the speaker could not play the utterance: '
                        f'{log_text(utterance.detail, 500)} ({self._played(utterance, result)} '
                        'played, by its own count)')

    def _piece(self, uid: str, data: bytes, *, final: bool = False,
               cancelled: bool = False) -> AudioPiece:
        return AudioPiece(uid, self.backend.sample_rate, self.backend.channels, data,
                          final=final, cancelled=cancelled)

    def _emit(self, piece: AudioPiece) -> None:
        if self._on_chunk is not None:
            self._on_chunk(piece)
        publisher = self._publisher
        if publisher is None:
            return
        message = self._message_type()
        message.header.stamp = bound(self._host, self.name).now()
        message.utterance_id = ros_string(piece.utterance_id)
        message.sample_rate = piece.sample_rate
        message.channels = piece.channels
        message.encoding = piece.encoding
        message.data = piece.data
        message.final = piece.final
        message.cancelled = piece.cancelled
        publisher.publish(message)

    def close(self) -> None:
        """Stop any utterance in progress, release waiting calls and the backend."""
        self._closed = True
        with self._lock:
            active = list(self._active.values())
        for utterance in active:
            utterance.stop.set()
            utterance.released = 'say is shutting down'
            utterance.changed.set()
        self.backend.close()
