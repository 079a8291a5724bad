"""Configuration: file lookup, validation messages, overrides, and config.toml staying in sync."""

from __future__ import annotations

import dataclasses
import tomllib
from pathlib import Path
from typing import Any

import pytest

from voiced.config import (
    CONFIG_ENV,
    Config,
    ControllerConfig,
    check_config,
    config_to_dict,
    default_config_toml,
    find_config_file,
    format_ok,
    load_config,
    parse_address,
    replace_in,
    resolve_config_path,
    with_overrides,
)
from voiced.configschema import doc, field_paths, parse, setting
from voiced.errors import ConfigError

REPO_CONFIG = Path(__file__).resolve().parents[1] / "config.toml"


def write(directory: Path, text: str, name: str = "config.toml") -> Path:
    path = directory / name
    path.write_text(text, encoding="utf-8")
    return path


def problems_of(path: Path, default_path: Path | None = None) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        load_config(str(path), {}, default_path or path.parent / "absent.toml")
    return [str(problem) for problem in caught.value.problems]


# --- Which file is read ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cli", "env", "system_exists", "expected"),
    [
        ("cli", "env", True, "cli"),
        ("cli", None, True, "cli"),
        (None, "env", True, "env"),
        (None, "", True, "system"),
        (None, None, True, "system"),
        (None, "", False, None),
        (None, None, False, None),
    ],
    ids=[
        "cli-beats-env-and-system",
        "cli-beats-system",
        "env-beats-system",
        "empty-env-is-unset",
        "system-file",
        "empty-env-no-system-defaults",
        "nothing-defaults",
    ],
)
def test_config_file_precedence(
    tmp_path: Path, cli: str | None, env: str | None, system_exists: bool, expected: str | None
) -> None:
    files = {
        name: write(tmp_path, f'[cell]\nname = "{name}"\n', f"{name}.toml")
        for name in ("cli", "env", "system")
    }
    system = files["system"] if system_exists else tmp_path / "missing-system.toml"
    environ = {} if env is None else {CONFIG_ENV: str(files[env]) if env else ""}
    cli_path = str(files[cli]) if cli else None

    config = load_config(cli_path, environ, system)

    if expected is None:
        assert config == Config()
        assert config.source is None
    else:
        assert config.cell.name == expected
        assert config.source == str(files[expected])


@pytest.mark.parametrize(
    ("cli", "env", "given_by"),
    [("gone.toml", None, "--config"), (None, "gone.toml", "$VOICED_CONFIG")],
)
def test_missing_named_file_is_an_error_naming_it(
    tmp_path: Path, cli: str | None, env: str | None, given_by: str
) -> None:
    missing = str(tmp_path / "gone.toml")
    system = write(tmp_path, "", "system.toml")  # exists, yet must not be fallen back to
    environ = {CONFIG_ENV: missing} if env else {}

    with pytest.raises(ConfigError) as caught:
        load_config(missing if cli else None, environ, system)

    assert [str(p) for p in caught.value.problems] == [
        f"{missing}: no such file (given by {given_by})"
    ]


def test_empty_config_flag_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="--config: empty path"):
        find_config_file("", {}, tmp_path / "absent.toml")


def test_unreadable_path_is_a_config_error(tmp_path: Path) -> None:
    directory = tmp_path / "dir.toml"
    directory.mkdir()
    [line] = problems_of(directory)
    assert line.startswith(f"{directory}: cannot read: ")


def test_empty_file_gives_defaults_and_records_source(tmp_path: Path) -> None:
    path = write(tmp_path, "")
    config = load_config(str(path), {})
    assert config == Config()
    assert config.source == str(path)


def test_partial_section_keeps_other_defaults(tmp_path: Path) -> None:
    config = load_config(str(write(tmp_path, "[query]\nsilence_timeout = 2\n")), {})
    assert config.query.silence_timeout == 2.0
    assert isinstance(config.query.silence_timeout, float)
    assert config.controller == ControllerConfig()


# --- Validation messages ----------------------------------------------------------------------


CONTROLLER_KEYS = (
    "address, control_port, connect_timeout, heartbeat_interval, heartbeat_timeout, window, "
    "key_file, allow_unauthenticated"
)


@pytest.mark.parametrize(
    ("toml", "expected"),
    [
        pytest.param(
            "[controller]\nheartbeat_intervall = 1.0",
            "controller.heartbeat_intervall: unknown key (known keys in [controller]: "
            f"{CONTROLLER_KEYS}); did you mean heartbeat_interval?",
            id="unknown-key",
        ),
        pytest.param(
            "[controler]\nwindow = 2",
            "controler: unknown section (known sections: daemon, cell, query, controller, "
            "simulator, logging, targets, interpreter, llm, audio, stt, wake, tts, page, "
            "review, mqtt); did you mean controller?",
            id="unknown-section",
        ),
        pytest.param(
            "[daemon.extra]\nx = 1",
            "daemon.extra: unknown key (known keys in [daemon]: mode, wake_word, wake_variants, "
            "shutdown_timeout, max_utterance_chars)",
            id="unknown-subtable",
        ),
        pytest.param(
            "daemon = 3",
            "daemon: expected a table, got 3 (int)",
            id="section-not-a-table",
        ),
        pytest.param(
            "[daemon]\nmode = 3",
            'daemon.mode: expected one of "wake", "always", got 3 (int)',
            id="choices-wrong-type",
        ),
        pytest.param(
            '[daemon]\nmode = "sometimes"',
            'daemon.mode: expected one of "wake", "always", got "sometimes" (str)',
            id="choices-unknown-value",
        ),
        pytest.param(
            '[query]\nsilence_timeout = "fast"',
            'query.silence_timeout: expected a number (float), got "fast" (str)',
            id="float-given-str",
        ),
        pytest.param(
            "[query]\nsilence_timeout = true",
            "query.silence_timeout: expected a number (float), got true (bool)",
            id="float-given-bool",
        ),
        pytest.param(
            "[query]\nsilence_timeout = nan",
            "query.silence_timeout: expected a finite number (float), got nan (float)",
            id="float-nan",
        ),
        pytest.param(
            "[query]\nsilence_timeout = 45",
            "query.silence_timeout: 45.0 is out of range, expected 0.3 to 10.0",
            id="float-above-range",
        ),
        pytest.param(
            "[query]\nsilence_timeout = 0.1",
            "query.silence_timeout: 0.1 is out of range, expected 0.3 to 10.0",
            id="float-below-range",
        ),
        pytest.param(
            "[controller]\nwindow = 1.5",
            "controller.window: expected an integer (int), got 1.5 (float)",
            id="int-given-float",
        ),
        pytest.param(
            "[controller]\nwindow = true",
            "controller.window: expected an integer (int), got true (bool)",
            id="int-given-bool",
        ),
        pytest.param(
            "[controller]\nwindow = 0",
            "controller.window: 0 is out of range, expected 1 to 64",
            id="int-out-of-range",
        ),
        pytest.param(
            "[daemon]\nwake_word = 7",
            "daemon.wake_word: expected a string (str), got 7 (int)",
            id="str-given-int",
        ),
        pytest.param(
            '[daemon]\nwake_word = "  "',
            "daemon.wake_word: must not be empty",
            id="str-empty",
        ),
        pytest.param(
            "[cell]\nname = [1, 2]",
            "cell.name: expected a string (str), got [1, 2] (list)",
            id="str-given-array",
        ),
        pytest.param(
            '[logging]\nlevel = "verbose"',
            'logging.level: expected one of "debug", "info", "warning", "error", '
            'got "verbose" (str)',
            id="log-level",
        ),
        pytest.param(
            "[controller]\nheartbeat_interval = 1.0\nheartbeat_timeout = 1.0",
            "controller.heartbeat_timeout: 1.0 must be greater than heartbeat_interval (1.0)",
            id="cross-field-heartbeat",
        ),
        pytest.param(
            '[controller]\naddress = "robot:65535"',
            "controller.control_port: 0 means the motion port + 1, but the motion port is "
            "65535; set it explicitly",
            id="cross-field-control-port",
        ),
    ],
)
def test_invalid_value_is_reported_with_file_and_key(
    tmp_path: Path, toml: str, expected: str
) -> None:
    path = write(tmp_path, toml)
    assert problems_of(path) == [f"{path}: {expected}"]


@pytest.mark.parametrize(
    "address",
    ["robot", "robot:", ":5000", "robot:0", "robot:65536", "robot:x", "ro bot:80", "robot:²"],
)
def test_malformed_controller_address(tmp_path: Path, address: str) -> None:
    path = write(tmp_path, f'[controller]\naddress = "{address}"')
    assert problems_of(path) == [
        f'{path}: controller.address: expected "sim" or "HOST:PORT" with a port 1 to 65535, '
        f'got "{address}" (str)'
    ]


@pytest.mark.parametrize(
    ("address", "endpoint"),
    [
        ("sim", None),
        ("10.0.0.5:5000", ("10.0.0.5", 5000)),
        ("gofa.local:1", ("gofa.local", 1)),
        ("[::1]:65535", ("::1", 65535)),
    ],
)
def test_valid_controller_address(
    tmp_path: Path, address: str, endpoint: tuple[str, int] | None
) -> None:
    # control_port is set so that the 65535 case passes the motion-port + 1 cross-check.
    path = write(tmp_path, f'[controller]\naddress = "{address}"\ncontrol_port = 6000')
    controller = load_config(str(path), {}).controller
    assert controller.endpoint == endpoint
    assert controller.is_simulated == (endpoint is None)


def test_control_port_for() -> None:
    assert ControllerConfig().control_port_for(5000) == 5001
    assert ControllerConfig(control_port=7000).control_port_for(5000) == 7000
    assert parse_address("host:80") == ("host", 80)


def test_every_problem_is_reported_at_once(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """\
        [daemon]
        mode = 3
        colour = "red"
        [query]
        silence_timeout = 45
        [controller]
        window = "many"
        heartbeat_interval = 1.0
        heartbeat_timeout = 0.5
        [bogus]
        """.replace("        ", ""),
    )
    paths = [line.split(": ")[1] for line in problems_of(path)]
    # The heartbeat cross-check is skipped while [controller] has invalid fields.
    assert paths == [
        "bogus",
        "daemon.colour",
        "daemon.mode",
        "query.silence_timeout",
        "controller.window",
    ]


def test_toml_syntax_error_names_file_line_and_column(tmp_path: Path) -> None:
    path = write(tmp_path, '[daemon]\nmode = "wake"\nwake_word = \n')
    [line] = problems_of(path)
    assert line.startswith(f"{path}: invalid TOML: ")
    assert "line 3, column 13" in line


def test_invalid_utf8_is_a_config_error(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_bytes(b'[cell]\nname = "\xff"\n')
    [line] = problems_of(path)
    assert line.startswith(f"{path}: not valid UTF-8")


def test_system_file_is_validated_too(tmp_path: Path) -> None:
    system = write(tmp_path, "[daemon]\nmode = 1\n", "system.toml")
    with pytest.raises(ConfigError, match=r"system\.toml: daemon\.mode"):
        load_config(None, {}, system)


# --- check_config / format_ok -----------------------------------------------------------------


def test_check_config_valid_and_invalid(tmp_path: Path) -> None:
    good = write(tmp_path, "[controller]\nwindow = 8\n", "good.toml")
    bad = write(tmp_path, "[controller]\nwindow = 0\nbogus = 1\n", "bad.toml")
    absent = tmp_path / "absent.toml"

    assert check_config(str(good), {}, absent) == []
    assert check_config(str(bad), {}, absent) == [
        f"{bad}: controller.bogus: unknown key (known keys in [controller]: {CONTROLLER_KEYS})",
        f"{bad}: controller.window: 0 is out of range, expected 1 to 64",
    ]
    assert check_config(None, {}, absent) == []


def test_format_ok(tmp_path: Path) -> None:
    path = write(tmp_path, "")
    assert format_ok(load_config(str(path), {})) == f"OK: {path}"
    assert format_ok(Config()) == "OK: no config file, using the defaults"


# --- Overrides (CLI flags) --------------------------------------------------------------------


def test_with_overrides_merges_and_keeps_source(tmp_path: Path) -> None:
    path = write(tmp_path, '[daemon]\nwake_word = "robot"\n')
    config = load_config(str(path), {})

    changed = with_overrides(config, {"daemon": {"mode": "always"}})

    assert changed.daemon.mode == "always"
    assert changed.daemon.wake_word == "robot"
    assert changed.source == str(path)


def test_replace_in_converts_and_validates() -> None:
    config = replace_in(Config(), "query.silence_timeout", 1)
    assert config.query.silence_timeout == 1.0
    assert isinstance(config.query.silence_timeout, float)
    with pytest.raises(ConfigError) as caught:
        replace_in(Config(), "query.silence_timeout", 45.0)
    assert [str(p) for p in caught.value.problems] == [
        "command line: query.silence_timeout: 45.0 is out of range, expected 0.3 to 10.0"
    ]


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        ({"daemon": {"mode": 3}}, 'daemon.mode: expected one of "wake", "always", got 3 (int)'),
        ({"daemon": {"moode": "wake"}}, "daemon.moode: unknown key"),
        ({"controller": {"heartbeat_timeout": 0.4}}, "controller.heartbeat_timeout: 0.4 must be"),
    ],
    ids=["wrong-type", "unknown-key", "cross-field"],
)
def test_invalid_override_names_the_command_line(overrides: dict[str, Any], expected: str) -> None:
    with pytest.raises(ConfigError) as caught:
        with_overrides(Config(), overrides)
    [problem] = caught.value.problems
    assert str(problem).startswith(f"command line: {expected}")


def test_config_to_dict_round_trips() -> None:
    config = Config()
    data = config_to_dict(config)
    assert data["controller"]["address"] == "sim"
    assert "source" not in data
    assert parse(Config, data, "<defaults>") == config


def test_resolve_config_path(tmp_path: Path) -> None:
    path = write(tmp_path, "")
    loaded = load_config(str(path), {})
    assert resolve_config_path(loaded, "cells/mine.toml") == tmp_path / "cells/mine.toml"
    assert resolve_config_path(loaded, "/abs/mine.toml") == Path("/abs/mine.toml")
    assert resolve_config_path(Config(), "mine.toml") == Path("mine.toml")


# --- config.toml must not drift from the dataclasses ------------------------------------------


def test_repo_config_toml_loads_and_equals_defaults() -> None:
    config = load_config(str(REPO_CONFIG), {})
    assert config == Config()
    assert config_to_dict(config) == config_to_dict(Config())


def test_repo_config_toml_has_every_key_with_a_comment_above() -> None:
    section_name = ""
    commented: set[str] = set()
    previous = ""
    for raw in REPO_CONFIG.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if line.startswith("["):
            section_name = line.strip("[]")
        elif "=" in line and not line.startswith("#") and previous.startswith("#"):
            commented.add(f"{section_name}.{line.split('=')[0].strip()}")
        if line:
            previous = line
    missing = [path for path in field_paths(Config) if path not in commented]
    assert not missing, f"config.toml lacks (or has no comment above): {missing}"


def test_repo_config_toml_is_the_rendered_defaults() -> None:
    assert REPO_CONFIG.read_text(encoding="utf-8") == default_config_toml(), (
        "config.toml is out of date: python -m voiced.config > config.toml"
    )


def test_defaults_satisfy_their_own_constraints() -> None:
    # Defaults bypass validation when a key is absent, so check them explicitly.
    assert parse(Config, tomllib.loads(default_config_toml()), "<defaults>") == Config()


# --- The generic schema, on dataclasses declared here -----------------------------------------


@dataclasses.dataclass(frozen=True)
class _Inner:
    flag: bool = setting(False, "A switch.")
    names: tuple[str, ...] = setting(("a",), "Names.", choices=("a", "b"))
    ratio: float = setting(0.5, "A ratio.", min=0.0)


@dataclasses.dataclass(frozen=True)
class _Outer:
    inner: _Inner = dataclasses.field(default_factory=_Inner, metadata=doc("Inner table."))
    count: int = setting(1, "A count.", max=10)


@pytest.mark.parametrize(
    ("table", "expected"),
    [
        ({"inner": {"flag": 1}}, "inner.flag: expected true or false (bool), got 1 (int)"),
        (
            {"inner": {"names": "a"}},
            'inner.names: expected an array of strings (str), got "a" (str)',
        ),
        ({"inner": {"names": ["a", "c"]}}, 'inner.names[1]: expected one of "a", "b", got "c"'),
        ({"inner": {"ratio": -1}}, "inner.ratio: -1.0 is out of range, expected at least 0.0"),
        ({"count": 11}, "count: 11 is out of range, expected at most 10"),
        ({"other": 1}, "other: unknown key (known top-level keys: inner, count)"),
    ],
)
def test_generic_schema_rejects(table: dict[str, Any], expected: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse(_Outer, table, "t")
    [problem] = caught.value.problems
    assert str(problem).startswith(f"t: {expected}")


def test_generic_schema_accepts() -> None:
    built = parse(_Outer, {"inner": {"flag": True, "names": ["b", "a"], "ratio": 2}}, "t")
    assert built == _Outer(inner=_Inner(flag=True, names=("b", "a"), ratio=2.0))


def test_unsupported_field_type_is_a_schema_error() -> None:
    @dataclasses.dataclass(frozen=True)
    class Bad:
        items: list[str] = dataclasses.field(default_factory=list)

    with pytest.raises(TypeError, match=r"Bad\.items: unsupported settings type"):
        parse(Bad, {}, "t")
