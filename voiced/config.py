"""The daemon's configuration: package defaults merged with the user's TOML file.

The dataclasses below are the single source of truth: their field defaults are the defaults,
their types and metadata are what the file is validated against (generically, by
`voiced.configschema`), and the top-level `config.toml` is rendered from them
(`python -m voiced.config > config.toml`). A new section is added by declaring a settings
dataclass and a field for it on `Config`; nothing else needs to change.

Which file is read: `--config PATH`, else `$VOICED_CONFIG`, else `/etc/voiced/config.toml` if it
exists, else none (defaults only). Every problem in the file is reported at once.
"""

from __future__ import annotations

import dataclasses
import os
import tomllib
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from voiced.audio.settings import (
    AudioSettings,
    SttSettings,
    TtsSettings,
    WakeSettings,
)
from voiced.configschema import INTERNAL, describe, doc, merge, parse, render_toml, setting
from voiced.configschema import to_dict as _to_dict
from voiced.errors import ConfigError, Problem
from voiced.llm.settings import LlmSettings
from voiced.mqtt.settings import MqttSettings
from voiced.page.settings import PageSettings

DEFAULT_CONFIG_PATH = Path("/etc/voiced/config.toml")
"""The system-wide file, read when neither --config nor $VOICED_CONFIG names one."""
CONFIG_ENV = "VOICED_CONFIG"
"""The environment variable naming the config file."""
OVERRIDES_SOURCE = "command line"
"""The source named in problems caused by `with_overrides` (CLI flags)."""
SIMULATOR_ADDRESS = "sim"
"""The `controller.address` that starts the simulator in-process."""

_HEADER = """\
voiced configuration. Every key is optional: a missing key keeps the default shown here.
Read from --config PATH, else $VOICED_CONFIG, else /etc/voiced/config.toml.
This file is generated from voiced/config.py: python -m voiced.config > config.toml
"""


def _check_address(value: str) -> str | None:
    if value == SIMULATOR_ADDRESS or parse_address(value) is not None:
        return None
    return f'expected "sim" or "HOST:PORT" with a port 1 to 65535, got {describe(value)}'


def parse_address(address: str) -> tuple[str, int] | None:
    """`HOST:PORT` (IPv6 hosts in brackets) -> (host, port), or None when malformed."""
    host, colon, port = address.rpartition(":")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if not colon or not host or any(c.isspace() for c in host):
        return None
    # isdigit alone admits non-ASCII digits such as "²", which int() then rejects.
    if not (port.isascii() and port.isdigit()) or not 1 <= int(port) <= 65535:
        return None
    return host, int(port)


@dataclass(frozen=True)
class DaemonConfig:
    """[daemon]: when an utterance counts as a command, and how the daemon stops."""

    mode: str = setting(
        "wake",
        'When an utterance counts as a command. "wake": only when it starts with the wake word; '
        '"always": every utterance is a command.',
        choices=("wake", "always"),
    )
    """"wake" or "always"."""
    wake_word: str = setting(
        "computer", 'The word that starts a command in "wake" mode.', nonempty=True
    )
    """Matched case-insensitively by the recogniser; unused in "always" mode."""
    wake_variants: tuple[str, ...] = setting(
        ("compute her", "come pewter"),
        'Other ways speech-to-text writes the wake word (near misses such as "computers" are '
        "matched anyway). Replace these when you change wake_word.",
    )
    """Exact alternative spellings; fuzzy matching covers single-word near misses."""

    @property
    def wake_words(self) -> tuple[str, ...]:
        """The wake word and its variants."""
        return (self.wake_word, *self.wake_variants)

    shutdown_timeout: float = setting(
        5.0,
        "Seconds a graceful shutdown (SIGTERM) may take before the daemon stops forcibly.",
        min=0.5,
        max=30.0,
    )
    """Kept below systemd's TimeoutStopSec so that the daemon, not systemd, does the killing."""
    max_utterance_chars: int = setting(
        2000,
        "The longest utterance (typed line or transcript), and the longest command a query "
        "joins from several, in characters; a longer one is refused with a spoken reason and "
        "never stored. Dictated notes may be longer.",
        min=100,
        max=100_000,
    )
    """Far above any spoken command; a line this long is a wrong file or a runaway pipe."""


@dataclass(frozen=True)
class CellConfig:
    """[cell]: which robot cell is driven and the scene it starts in."""

    name: str = setting(
        "sandwich",
        "A bundled cell (sandwich, weld, blocks, barista) or the path to a cell .toml file; a "
        "relative path is relative to this file's directory.",
        nonempty=True,
    )
    """A bundled cell name or a path; the cell loader tells them apart."""
    scene: str = setting(
        "",
        "Path to a JSON scene (the state-view schema) the cell starts in; empty = the cell's "
        "own initial scene.",
    )
    """Empty means the cell's own initial scene."""


@dataclass(frozen=True)
class QueryConfig:
    """[query]: how a spoken query is framed."""

    silence_timeout: float = setting(
        1.5,
        "Seconds of silence (from the end of the last word) after which the query being "
        "spoken is submitted.",
        min=0.3,
        max=10.0,
    )
    """Seconds of silence that end a query."""
    complete_timeout: float = setting(
        0.4,
        "Seconds of silence (from the end of the last word) after which a query that already "
        'forms a whole command ("add bread") is submitted; partial ones wait silence_timeout. '
        "Speech starting within it still joins the command. In a cell whose sentences are "
        "closed, a whole command they may go on from waits silence_timeout. Keep it at most "
        "silence_timeout.",
        min=0.1,
        max=10.0,
    )
    """The quick path: a complete command does not wait out the full silence timer. Spoken, it
    runs alongside the hangover and the transcription (both about 0.3 s), so below ~0.45 s it
    mostly shortens the time the operator has to go on."""
    listen_timeout: float = setting(
        8.0,
        "Seconds to wait for a command after the wake word alone, or for the answer to a "
        'question for what a command left out ("Put what?"), before giving up.',
        min=1.0,
        max=60.0,
    )
    """How long an empty query waits for its first words."""
    confirm_timeout: float = setting(
        10.0,
        "Seconds a yes/no question (e.g. before clearing the assembly) waits for an answer; "
        "no answer means no.",
        min=2.0,
        max=120.0,
    )
    """How long the confirm frame waits."""


@dataclass(frozen=True)
class ControllerConfig:
    """[controller]: the link to the robot controller (or the simulator)."""

    address: str = setting(
        SIMULATOR_ADDRESS,
        '"sim" starts the simulator in-process on a loopback port chosen by the system; '
        '"HOST:PORT" connects to a real controller\'s motion channel (IPv6: "[::1]:PORT").',
        check=_check_address,
    )
    """"sim" or "HOST:PORT"; see `is_simulated` and `endpoint`."""
    control_port: int = setting(
        0,
        "TCP port of the controller's control channel; 0 = the motion port + 1.",
        min=0,
        max=65535,
    )
    """0 means the motion port + 1; see `control_port_for`."""
    connect_timeout: float = setting(
        3.0, "Seconds to wait for a connection to the controller.", min=0.1, max=60.0
    )
    """Seconds to wait for a connection."""
    heartbeat_interval: float = setting(
        0.5, "Seconds between heartbeat PINGs on the control channel.", min=0.05, max=10.0
    )
    """Seconds between PINGs."""
    heartbeat_timeout: float = setting(
        2.0,
        "Seconds without a PONG after which the link is declared lost; must be greater than "
        "heartbeat_interval.",
        min=0.2,
        max=30.0,
    )
    """Seconds without a PONG before the link is lost; more than `heartbeat_interval`."""
    window: int = setting(
        4,
        "How many motion primitives may be in flight (sent, not yet done) at once.",
        min=1,
        max=64,
    )
    """Primitives in flight at once."""
    key_file: str = setting(
        "",
        "File holding the shared secret the controller checks at every connection (a "
        "challenge-response: the key never travels). Empty: $CREDENTIALS_DIRECTORY/"
        "controller-key when systemd loads it (LoadCredential=), else no key. A relative "
        "path is relative to this file's directory. Make one with `voiced keygen PATH`.",
    )
    """The shared secret's file; see `voiced.link.key.controller_key`."""
    allow_unauthenticated: bool = setting(
        False,
        "With a key: still drive a controller that checks no key (the RAPID server, which "
        "can only check the client's address: docs/RAPID.md).",
    )
    """With a key, accept a controller that offers no challenge."""

    @property
    def is_simulated(self) -> bool:
        """True when the daemon starts the simulator instead of connecting to a controller."""
        return self.address == SIMULATOR_ADDRESS

    @property
    def endpoint(self) -> tuple[str, int] | None:
        """The motion channel's (host, port); None for the simulator."""
        return None if self.is_simulated else parse_address(self.address)

    def control_port_for(self, motion_port: int) -> int:
        """The control channel's port given the motion channel's (also for the simulator's)."""
        return self.control_port or motion_port + 1

    def cross_check(self) -> list[tuple[str, str]]:
        problems: list[tuple[str, str]] = []
        if self.heartbeat_timeout <= self.heartbeat_interval:
            problems.append(
                (
                    "heartbeat_timeout",
                    f"{self.heartbeat_timeout} must be greater than heartbeat_interval "
                    f"({self.heartbeat_interval})",
                )
            )
        endpoint = self.endpoint
        if self.control_port == 0 and endpoint is not None and endpoint[1] == 65535:
            problems.append(
                (
                    "control_port",
                    "0 means the motion port + 1, but the motion port is 65535; set it explicitly",
                )
            )
        return problems


@dataclass(frozen=True)
class SimulatorConfig:
    """[simulator]: the in-process simulator (used when controller.address = "sim")."""

    time_scale: float = setting(
        1.0,
        "How long simulated motion takes relative to real time: 1.0 = real time, 0.1 = ten "
        "times faster.",
        min=0.001,
        max=10.0,
    )
    """Multiplies every simulated duration."""


@dataclass(frozen=True)
class LoggingConfig:
    """[logging]: what is logged and how it is formatted."""

    level: str = setting(
        "info", "The least severe level logged.", choices=("debug", "info", "warning", "error")
    )
    """The least severe level logged."""
    format: str = setting(
        "auto",
        '"json": one JSON object per line; "console": human-readable lines; "auto": JSON when '
        "stderr is not a terminal (e.g. under systemd), console otherwise.",
        choices=("auto", "json", "console"),
    )
    """How log lines are written."""
    priority_prefix: str = setting(
        "auto",
        'Start each line with its syslog priority as "<N>" (sd-daemon(3)), which journald reads '
        'as the entry\'s priority, so `journalctl -p warning` filters: "auto": when stderr is the '
        'journal ($JOURNAL_STREAM), "always", "never". JSON lines carry a "priority" field too.',
        choices=("auto", "always", "never"),
    )
    """When lines start with their syslog priority."""


QUERY_TARGETS = ("robot", "note", "queue", "task_api", "local_model")
"""Where the query frame may submit (`targets.query`)."""
DICTATION_TARGETS = ("note", "queue", "task_api", "local_model")
"""Where "end dictation" may send the dictated text (`targets.dictation`)."""
LOCAL_MODEL_KINDS = ("ollama", "openai")
"""The HTTP dialects `targets.local_model.kind` may name."""
DEFAULT_SYSTEM_PROMPT = (
    "Tidy up this dictated text into a clean list, one item per line. Keep every item, in the "
    "order given; fix only obvious speech-to-text mistakes and add nothing. Reply with the list "
    "only."
)
"""What the local model is asked to do with dictated text unless the file says otherwise."""


def _check_http_url(value: str) -> str | None:
    problem = http_url_problem(value) if value else None
    return None if problem is None else f"{problem}, got {describe(value)}"


def http_url_problem(url: str) -> str | None:
    """None when `url` is an absolute http(s) URL with a host, else what is wrong with it."""
    if any(c.isspace() for c in url):
        return "expected an http(s) URL without spaces"
    try:
        parts = urllib.parse.urlsplit(url)
        parts.port  # noqa: B018 -- raises ValueError for a port out of range or not a number
    except ValueError:
        return "expected an http(s) URL with a valid port"
    if parts.scheme not in ("http", "https"):
        return 'expected a URL starting with "http://" or "https://" (empty = off)'
    if not parts.hostname:
        return "expected an http(s) URL with a host"
    return None


@dataclass(frozen=True)
class TaskApiConfig:
    """[targets.task_api]: the task list, reached by an HTTP POST of the text as JSON."""

    url: str = setting(
        "",
        'URL the text is POSTed to as JSON {"text", "correlation_id", "timestamp", "source"}; '
        "empty = no task list.",
        check=_check_http_url,
    )
    """Empty means the target does not exist."""
    timeout: float = setting(
        5.0, "Seconds one attempt may take before it counts as failed.", min=0.1, max=120.0
    )
    """Seconds per attempt, connecting included."""
    retries: int = setting(
        3,
        "Further attempts after a failed one (connection error, timeout, HTTP 429 or 5xx); a "
        "refusal (other HTTP 4xx) is never retried.",
        min=0,
        max=10,
    )
    """Attempts after the first."""


@dataclass(frozen=True)
class LocalModelConfig:
    """[targets.local_model]: a local language model that tidies up dictated text."""

    url: str = setting(
        "",
        'The model server: a base URL such as "http://127.0.0.1:11434" (the path is added: '
        "/api/chat for ollama, /v1/chat/completions for openai) or a full endpoint URL "
        "(ollama also accepts /api/generate); empty = no local model.",
        check=_check_http_url,
    )
    """Empty means the target does not exist; nothing is contacted."""
    kind: str = setting(
        "ollama",
        '"ollama": the Ollama API; "openai": an OpenAI-compatible chat completions API '
        "(llama.cpp, vLLM, LM Studio, ...).",
        choices=LOCAL_MODEL_KINDS,
    )
    """Which request and reply shapes are spoken."""
    model: str = setting("llama3.2", "The model name sent with each request.", nonempty=True)
    """Passed through to the server."""
    system_prompt: str = setting(
        DEFAULT_SYSTEM_PROMPT,
        "The instruction sent with the dictated text. The reply is saved as a note beside the "
        "original text, which is always kept.",
        nonempty=True,
    )
    """The system message."""
    timeout: float = setting(
        30.0, "Seconds one attempt may take before it counts as failed.", min=0.1, max=600.0
    )
    """Seconds per attempt; a local model may be slow to load."""
    retries: int = setting(
        2,
        "Further attempts after a failed one (connection error, timeout, HTTP 429 or 5xx).",
        min=0,
        max=10,
    )
    """Attempts after the first."""


@dataclass(frozen=True)
class TargetsConfig:
    """[targets]: where submitted text goes, and the targets that need an address."""

    query: str = setting(
        "robot",
        "Where a spoken query is submitted.",
        choices=QUERY_TARGETS,
    )
    """A target name; see `QUERY_TARGETS`."""
    dictation: str = setting(
        "note",
        'Where "end dictation" sends the dictated text.',
        choices=DICTATION_TARGETS,
    )
    """A target name; see `DICTATION_TARGETS`."""
    task_api: TaskApiConfig = field(
        default_factory=TaskApiConfig, metadata=doc("The task list (an HTTP JSON API).")
    )
    """[targets.task_api]"""
    local_model: LocalModelConfig = field(
        default_factory=LocalModelConfig,
        metadata=doc("A local language model (Ollama or OpenAI-compatible) for dictated text."),
    )
    """[targets.local_model]"""

    def cross_check(self) -> list[tuple[str, str]]:
        urls = {"task_api": self.task_api.url, "local_model": self.local_model.url}
        problems: list[tuple[str, str]] = []
        for key in ("query", "dictation"):
            chosen = getattr(self, key)
            if urls.get(chosen) == "":
                problems.append((key, f'"{chosen}" needs targets.{chosen}.url'))
        return problems


@dataclass(frozen=True)
class ReviewConfig:
    """[review]: which plans are read back for approval before any motion."""

    cells: tuple[str, ...] = setting(
        (),
        "Cells whose every plan is read back for a yes, no or change before it runs.",
    )
    """Cell names."""
    sources: tuple[str, ...] = setting(
        ("llm",),
        "Interpretation sources whose plans are read back: phrase_bank, template, grammar, llm, "
        "replay. "
        "A combined source counts as each of its parts: llm+planner (an arrangement the model "
        "understood, planned by the planner) and grammar+llm are read back when llm is listed.",
    )
    """Sources (an `Interpretation.source`)."""
    strict: bool = setting(
        False,
        "Strict mode: a plan below strict_threshold confidence is read back first "
        "(creative ones excepted).",
    )
    """Whether low-confidence plans need a yes."""
    strict_threshold: float = setting(
        0.6, "The confidence below which strict mode asks first.", min=0.0, max=1.0
    )
    """Seed 000's 0.6."""


@dataclass(frozen=True)
class InterpreterConfig:
    """[interpreter]: the offline tiers (phrase bank, grammar) and learning."""

    phrase_threshold: float = setting(
        90.0,
        "How close (rapidfuzz ratio, 0-100) an utterance must be to a known phrase for the "
        "phrase bank to take it.",
        min=50.0,
        max=100.0,
    )
    """Fuzzy phrase-bank cutoff."""
    learn_threshold: float = setting(
        0.80,
        'The confidence a learning command ("when I say lunch, make ...") needs before it is '
        "saved.",
        min=0.0,
        max=1.0,
    )
    """Below this nothing is learned."""


@dataclass(frozen=True)
class Config:
    """The whole configuration. Build it with `load_config`; vary it with `with_overrides`."""

    daemon: DaemonConfig = field(
        default_factory=DaemonConfig, metadata=doc("The daemon: listening mode and shutdown.")
    )
    """[daemon]"""
    cell: CellConfig = field(
        default_factory=CellConfig, metadata=doc("The robot cell and its initial scene.")
    )
    """[cell]"""
    query: QueryConfig = field(
        default_factory=QueryConfig, metadata=doc("Framing of spoken queries.")
    )
    """[query]"""
    controller: ControllerConfig = field(
        default_factory=ControllerConfig,
        metadata=doc("The robot controller link (or the in-process simulator)."),
    )
    """[controller]"""
    simulator: SimulatorConfig = field(
        default_factory=SimulatorConfig,
        metadata=doc('The simulator, used when controller.address = "sim".'),
    )
    """[simulator]"""
    logging: LoggingConfig = field(default_factory=LoggingConfig, metadata=doc("Logging."))
    """[logging]"""
    targets: TargetsConfig = field(
        default_factory=TargetsConfig,
        metadata=doc(
            "Dispatch targets: where the query and dictation frames send text, and the task list "
            "and local model they may use."
        ),
    )
    """[targets]"""
    interpreter: InterpreterConfig = field(
        default_factory=InterpreterConfig,
        metadata=doc("The offline interpretation tiers: phrase bank, grammar, learning."),
    )
    """[interpreter]"""
    llm: LlmSettings = field(
        default_factory=LlmSettings,
        metadata=doc(
            "The language-model tier, used only with ANTHROPIC_API_KEY set and only for what the "
            "phrase bank and grammar cannot resolve, and for creative commands."
        ),
    )
    """[llm]"""
    audio: AudioSettings = field(
        default_factory=AudioSettings,
        metadata=doc("Audio input: the source and how speech is cut into segments."),
    )
    """[audio]"""
    stt: SttSettings = field(
        default_factory=SttSettings, metadata=doc("Speech-to-text: the engine and its model.")
    )
    """[stt]"""
    wake: WakeSettings = field(
        default_factory=WakeSettings, metadata=doc("How the wake word is detected in wake mode.")
    )
    """[wake]"""
    tts: TtsSettings = field(
        default_factory=TtsSettings, metadata=doc("Spoken feedback: the engine and the voices.")
    )
    """[tts]"""
    page: PageSettings = field(
        default_factory=PageSettings,
        metadata=doc(
            "The cell's page: a local web page with the cell live, every utterance from "
            "transcript to outcome (with its audio) and a STOP button."
        ),
    )
    """[page]"""
    review: ReviewConfig = field(
        default_factory=ReviewConfig, metadata=doc("Human review of plans before they run.")
    )
    """[review]"""
    mqtt: MqttSettings = field(
        default_factory=MqttSettings,
        metadata=doc("The cell on an MQTT broker: state, events, stop and say; Home Assistant."),
    )
    """[mqtt]"""
    source: str | None = field(default=None, compare=False, metadata={INTERNAL: True})
    """The file the configuration was read from; None when only defaults apply.

    Not compared: two configurations with the same values are equal wherever they came from."""


def find_config_file(
    path: str | None,
    environ: Mapping[str, str] = os.environ,
    default_path: Path = DEFAULT_CONFIG_PATH,
    given_by: str = "--config",
) -> Path | None:
    """The file to read, or None for defaults only. A named file that is missing is an error
    (`given_by`: how it was named, for the message)."""
    if path is not None:
        return _existing(path, given_by)
    from_env = environ.get(CONFIG_ENV, "")
    if from_env:
        return _existing(from_env, f"${CONFIG_ENV}")
    return default_path if default_path.exists() else None


def _existing(path: str, given_by: str) -> Path:
    if not path:
        raise ConfigError([Problem(given_by, "", "empty path")])
    if not Path(path).exists():
        raise ConfigError([Problem(path, "", f"no such file (given by {given_by})")])
    return Path(path)


def load_config(
    path: str | None,
    environ: Mapping[str, str] = os.environ,
    default_path: Path = DEFAULT_CONFIG_PATH,
    given_by: str = "--config",
) -> Config:
    """Defaults merged with the chosen file (see `find_config_file`), validated.

    Raises ConfigError listing every problem: unreadable file, TOML syntax, unknown keys, wrong
    types, values out of range and inconsistent combinations.
    """
    file = find_config_file(path, environ, default_path, given_by)
    if file is None:
        return Config()
    data = _read_toml(file)
    _refuse_renamed(data, str(file))
    config = parse(Config, data, str(file))
    return dataclasses.replace(config, source=str(file))


RENAMED = {"debug_viewer": "renamed [page]: the segments are shown on the cell's page (same "
                           "keys: enabled, host, port, keep)"}  # fmt: skip
"""Sections an older config.toml may still have, and what to write instead."""


def _refuse_renamed(data: Mapping[str, Any], source: str) -> None:
    problems = [Problem(source, key, why) for key, why in RENAMED.items() if key in data]
    if problems:
        raise ConfigError(problems)


def _read_toml(file: Path) -> dict[str, Any]:
    source = str(file)
    try:
        text = file.read_bytes().decode("utf-8")
    except OSError as error:
        raise ConfigError([Problem(source, "", f"cannot read: {error.strerror}")]) from error
    except UnicodeDecodeError as error:
        raise ConfigError([Problem(source, "", f"not valid UTF-8: {error}")]) from error
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        # tomllib's message ends with "(at line L, column C)".
        raise ConfigError([Problem(source, "", f"invalid TOML: {error}")]) from error


def check_config(
    path: str | None,
    environ: Mapping[str, str] = os.environ,
    default_path: Path = DEFAULT_CONFIG_PATH,
) -> list[str]:
    """[] when the configuration loads, else one line per problem (for the CLI's check)."""
    try:
        load_config(path, environ, default_path)
    except ConfigError as error:
        return [str(problem) for problem in error.problems]
    return []


def format_ok(config: Config) -> str:
    """The line the CLI's check prints for a valid configuration."""
    if config.source is None:
        return "OK: no config file, using the defaults"
    return f"OK: {config.source}"


def config_to_dict(config: Config) -> dict[str, Any]:
    """The configuration as plain data, one dict per section (`source` is not included)."""
    return _to_dict(config)


def with_overrides(
    config: Config, overrides: Mapping[str, Any], source: str = OVERRIDES_SOURCE
) -> Config:
    """`config` with `overrides` (e.g. {"daemon": {"mode": "always"}}) laid over it, re-validated.

    Raises ConfigError naming `source` for unknown keys, wrong types, out-of-range values and
    combinations the overrides make inconsistent.
    """
    merged = merge(config_to_dict(config), overrides)
    return dataclasses.replace(parse(Config, merged, source), source=config.source)


def replace_in(
    config: Config, dotted_key: str, value: Any, source: str = OVERRIDES_SOURCE
) -> Config:
    """`config` with one key replaced: `replace_in(config, "query.silence_timeout", 1.0)`."""
    override: Any = value
    for part in reversed(dotted_key.split(".")):
        override = {part: override}
    return with_overrides(config, override, source)


def resolve_config_path(config: Config, value: str) -> Path:
    """A path from the configuration: relative ones are relative to the config file's directory.

    Without a config file (defaults only) they are relative to the working directory.
    """
    path = Path(value).expanduser()
    if path.is_absolute() or config.source is None:
        return path
    return Path(config.source).parent / path


def default_config_toml() -> str:
    """The reference `config.toml`: every key with its default, doc and constraints."""
    return render_toml(Config(), _HEADER)


if __name__ == "__main__":
    print(default_config_toml(), end="")
