"""`voiced check-config` and `voiced check-cell` on broken files: each problem as
`file:line: problem` (or `file: problem` for the whole file), exit 1; `--json` the same findings."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.e2e.helpers import REPO, voiced, voiced_env

WELD = (REPO / "robot" / "cells" / "weld.toml").read_text(encoding="utf-8")


def run(tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(voiced(*args), capture_output=True, text=True, env=voiced_env(tmp),
                          timeout=60)  # fmt: skip


def config_naming(tmp: Path, cell: str, extra: str = "") -> Path:
    config = tmp / "config.toml"
    config.write_text(f'[cell]\nname = "{cell}"\n{extra}', encoding="utf-8")
    return config


def with_unknown_key(tmp: Path) -> tuple[Path, int]:
    """The weld cell with a misspelt key in its first composite, and that key's line."""
    lines = WELD.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("[composites."))
    lines.insert(header + 1, "descriptoin = 'typo'")
    path = tmp / "typo.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path, header + 2


BROKEN: list[tuple[str, bytes, str]] = [
    ("binary", b"\x00\xff\xfe\x00 not text", "not UTF-8"),
    ("latin-1", "[cell]\nname = 'Schwei\u00dfzelle'\n".encode("latin-1"), "not UTF-8"),
    ("bad TOML", b'[cell]\nname = "x\n', "TOML syntax error"),
]


@pytest.mark.parametrize(("case", "content", "says"), BROKEN, ids=[b[0] for b in BROKEN])
def test_check_config_reports_a_broken_cell_file(
    tmp_path: Path, case: str, content: bytes, says: str
) -> None:
    cell = tmp_path / "broken.toml"
    cell.write_bytes(content)
    proc = run(tmp_path, "check-config", str(config_naming(tmp_path, str(cell))))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert proc.stderr == ""
    [line] = proc.stdout.splitlines()
    assert line.startswith(f"{cell}"), line
    assert says in line
    if case == "bad TOML":
        assert line.startswith(f"{cell}:2: "), line


def test_check_config_reports_a_missing_cell_file(tmp_path: Path) -> None:
    proc = run(tmp_path, "check-config", str(config_naming(tmp_path, "cells/gone.toml")))
    assert proc.returncode == 1
    assert proc.stdout.strip() == (
        f"{tmp_path / 'config.toml'}:2: cell.name: {tmp_path / 'cells' / 'gone.toml'}: "
        "no such cell file"
    )


def test_a_mistyped_bundled_cell_is_named_as_given_with_the_nearest_name(tmp_path: Path) -> None:
    proc = run(tmp_path, "check-config", str(config_naming(tmp_path, "sandwhich")))
    assert proc.returncode == 1
    assert proc.stdout.strip() == (
        f"{tmp_path / 'config.toml'}:2: cell.name: cell sandwhich: no such bundled cell "
        "(bundled: barista, blocks, sandwich, weld); did you mean sandwich?"
    )
    proc = run(tmp_path, "check-cell", "welt")
    assert proc.returncode == 1
    assert proc.stdout.strip() == (
        "cell welt: no such bundled cell (bundled: barista, blocks, sandwich, weld); "
        "did you mean weld?"
    )


def test_check_config_reports_an_unreadable_cell_file(tmp_path: Path) -> None:
    cell = tmp_path / "dir.toml"
    cell.mkdir()  # reading a directory fails as an unreadable file does
    proc = run(tmp_path, "check-config", str(config_naming(tmp_path, str(cell))))
    assert proc.returncode == 1
    assert proc.stdout.startswith(f"{cell}: cannot read"), proc.stdout


def test_check_config_gives_the_line_of_a_schema_problem(tmp_path: Path) -> None:
    cell, line = with_unknown_key(tmp_path)
    proc = run(tmp_path, "check-config", str(config_naming(tmp_path, str(cell))))
    assert proc.returncode == 1
    assert f"{cell}:{line}: composites." in proc.stdout
    assert "unknown key 'descriptoin'" in proc.stdout


def test_check_config_gives_the_line_of_a_config_problem(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[cell]\nname = "weld"\n\n[daemon]\nmode = "sometimes"\n', encoding="utf-8")
    proc = run(tmp_path, "check-config", str(config))
    assert proc.returncode == 1
    assert proc.stdout.startswith(f"{config}:5: daemon.mode: "), proc.stdout


def test_check_config_reports_a_broken_scene_file(tmp_path: Path) -> None:
    scene = tmp_path / "scene.json"
    scene.write_text('{"zones": {\n  "nowhere": []\n}}\n', encoding="utf-8")
    config = config_naming(tmp_path, "sandwich", f'scene = "{scene}"\n')
    proc = run(tmp_path, "check-config", str(config))
    assert proc.returncode == 1
    assert str(scene) in proc.stdout and "nowhere" in proc.stdout


def test_check_cell_accepts_every_bundled_cell(tmp_path: Path) -> None:
    for name in ("barista", "blocks", "sandwich", "weld"):
        proc = run(tmp_path, "check-cell", str(REPO / "robot" / "cells" / f"{name}.toml"))
        assert proc.returncode == 0, proc.stdout
        assert proc.stdout.startswith("OK: "), proc.stdout


def test_check_cell_alone_finds_what_check_config_finds(tmp_path: Path) -> None:
    cell, line = with_unknown_key(tmp_path)
    alone = run(tmp_path, "check-cell", str(cell))
    via_config = run(tmp_path, "check-config", str(config_naming(tmp_path, str(cell))))
    assert alone.returncode == 1
    assert alone.stdout == via_config.stdout
    assert alone.stdout.startswith(f"{cell}:{line}: ")


def test_check_cell_checks_the_sentences_table(tmp_path: Path) -> None:
    cell = tmp_path / "shop.toml"
    cell.write_text(WELD + '\n[sentences.intents.weld_everything]\nsentences = ["weld it all"]\n',
                    encoding="utf-8")  # fmt: skip
    proc = run(tmp_path, "check-cell", str(cell))
    assert proc.returncode == 1
    assert "'weld_everything' is not a composite" in proc.stdout
    assert proc.stdout.startswith(f"{cell}:{WELD.count(chr(10)) + 2}: "), proc.stdout


def test_check_cell_names_each_example_the_cell_does_not_read(tmp_path: Path) -> None:
    """ "What can I say" reads `[cell] examples` aloud: one the cell refuses would teach the
    operator a command that fails. A question is answered, not read, and passes."""
    text = (REPO / "robot" / "cells" / "barista.toml").read_text(encoding="utf-8")
    good = ('examples = ["can I get a medium latte with milk", '
            '"give me a small dark roast americano"]')  # fmt: skip
    assert good in text
    bad = ('examples = ["can I get a medium latte with milk", "give me a hot chocolate", '
           '"how many cups are left?", "fly to the moon"]')  # fmt: skip
    cell = tmp_path / "cafe.toml"
    cell.write_text(text.replace(good, bad), encoding="utf-8")
    proc = run(tmp_path, "check-cell", str(cell))
    line = text[: text.index(good)].count("\n") + 1
    assert proc.returncode == 1
    assert proc.stdout.splitlines() == [
        f"{cell}:{line}: cell.examples[1]: 'give me a hot chocolate' is not a command this cell "
        "reads: I don't have hot chocolate",
        f"{cell}:{line}: cell.examples[3]: 'fly to the moon' is not a command this cell reads: "
        "Unknown command 'fly'",
    ], proc.stdout


def test_check_cell_lists_problems_top_to_bottom_each_once(tmp_path: Path) -> None:
    """A wrong max_speed is said once, at its line, not again at every speed measured against
    it (they were fine); and the problems come in the order of the file's lines."""
    text = WELD.replace(
        'tool = "Welder"\nduration_ms = 1500', 'tool = "Hammer"\nduration_ms = 1500'
    )
    text = text.replace('say = "go to {position}"', 'say = "go to {position}"\nbogus_key = 1')
    lines = text.splitlines()
    speed_line = next(i for i, line in enumerate(lines) if line.startswith("max_speed ="))
    lines[speed_line] = "max_speed = -5"
    cell = tmp_path / "weld.toml"
    cell.write_text("\n".join(lines) + "\n", encoding="utf-8")
    proc = run(tmp_path, "check-cell", str(cell))
    assert proc.returncode == 1
    found = [line.split(": ")[1] for line in proc.stdout.splitlines()]
    assert found == [
        "limits.max_speed",
        "routines.tack_weld.tool",
        "composites.move_to_position.bogus_key",
    ], proc.stdout
    numbers = [int(line.split(":")[1]) for line in proc.stdout.splitlines()]
    assert numbers == sorted(numbers) and numbers[0] == speed_line + 1


@pytest.mark.parametrize(("content", "why"), [
    ("short", "token shorter than 16 characters"),
    (None, "cannot read: No such file or directory"),
])  # fmt: skip
def test_check_config_reads_the_page_token_as_the_daemon_does(
    tmp_path: Path, content: str | None, why: str
) -> None:
    """`run` refused a token file `check-config` said was fine."""
    if content is not None:
        (tmp_path / "stop.token").write_text(content, encoding="utf-8")
    config = tmp_path / "config.toml"
    config.write_text('[page]\nenabled = true\ntoken_file = "stop.token"\n', encoding="utf-8")
    for args in ([str(config)], ["--config", str(config)]):  # as `run` takes it, too
        proc = run(tmp_path, "check-config", *args)
        assert proc.returncode == 1
        assert proc.stdout.strip() == (
            f"{config}:3: page.token_file: {tmp_path / 'stop.token'}: {why}"
        ), proc.stdout


def test_check_cell_of_a_missing_file(tmp_path: Path) -> None:
    proc = run(tmp_path, "check-cell", str(tmp_path / "nope.toml"))
    assert proc.returncode == 1
    assert proc.stdout.strip() == f"{tmp_path / 'nope.toml'}: no such cell file"


def test_check_json_has_the_documented_shape_and_the_same_exit_code(tmp_path: Path) -> None:
    cell, line = with_unknown_key(tmp_path)
    proc = run(tmp_path, "check-cell", "--json", str(cell))
    assert proc.returncode == 1
    report = json.loads(proc.stdout)
    assert report["ok"] is False
    assert report["checked"] == [str(cell)]
    [problem] = report["problems"]
    assert problem["file"] == str(cell)
    assert problem["line"] == line
    assert problem["path"].startswith("composites.")
    assert "descriptoin" in problem["message"]

    good = run(tmp_path, "check-config", "--json", str(config_naming(tmp_path, "weld")))
    assert good.returncode == 0
    assert json.loads(good.stdout) == {
        "ok": True,
        "checked": [str(tmp_path / "config.toml"), str(REPO / "robot" / "cells" / "weld.toml")],
        "problems": [],
    }


def test_check_config_names_keyword_models_it_cannot_use(tmp_path: Path) -> None:
    """A wake word without a shipped model, a model of another phrase, a stop model that is
    not there and one that is not a model: each at the key that names it."""
    (tmp_path / "junk.npz").write_bytes(b"not a model")
    extra = ('[daemon]\nwake_word = "hey gofa"\n[wake]\nengine = "keyword"\n[audio]\n'
             'stop_models = ["stop", "models/missing.npz", "junk.npz"]\n')  # fmt: skip
    config = config_naming(tmp_path, "sandwich", extra)
    proc = run(tmp_path, "check-config", str(config))
    assert proc.returncode == 1
    lines = proc.stdout.splitlines()
    assert any("wake.keyword_model" in line and "no keyword model ships for the wake word"
               in line and "train-keyword" in line for line in lines), lines  # fmt: skip
    assert any("audio.stop_models" in line and "missing.npz: no such file" in line
               for line in lines), lines  # fmt: skip
    assert any("junk.npz: not a keyword model" in line for line in lines), lines
    other = tmp_path / "other.toml"
    other.write_text('[wake]\nengine = "keyword"\nkeyword_model = "'
                     + str(REPO / "audio/keyword/models/stop.npz")
                     + '"\n', encoding="utf-8")  # fmt: skip
    proc = run(tmp_path, "check-config", str(other))
    assert (
        proc.returncode == 1
        and "listens for 'stop', but the wake word is 'computer'" in proc.stdout
    )
    twice = tmp_path / "twice.toml"
    twice.write_text('[audio]\nstop_models = ["stop", "computer"]\n', encoding="utf-8")
    proc = run(tmp_path, "check-config", str(twice))
    assert proc.returncode == 1 and "listens for the wake word" in proc.stdout
    # The daemon refuses such a config at start, typed input or not.
    refused = run(tmp_path, "run", "--config", str(config), "--text", "/dev/null",
                  "--controller", "sim")  # fmt: skip
    assert refused.returncode == 1 and "junk.npz: not a keyword model" in refused.stderr
    stt = tmp_path / "stt.toml"
    stt.write_text('[daemon]\nwake_word = "hey gofa"\n[wake]\nengine = "stt"\n', encoding="utf-8")
    assert run(tmp_path, "check-config", str(stt)).returncode == 0


def test_check_config_says_where_a_path_came_from_and_when_there_is_no_file(
    tmp_path: Path,
) -> None:
    missing = str(tmp_path / "gone.toml")
    positional = run(tmp_path, "check-config", missing)
    assert (positional.returncode, positional.stdout.strip()) == (
        1, f"{missing}: no such file (given by the command line)")  # fmt: skip
    option = run(tmp_path, "check-config", "--config", missing)
    assert option.stdout.strip() == f"{missing}: no such file (given by --config)"
    if Path("/etc/voiced/config.toml").exists():
        pytest.skip("this machine has /etc/voiced/config.toml: there is no defaults-only run")
    none = run(tmp_path, "check-config")
    assert none.returncode == 0, none.stdout + none.stderr
    assert none.stdout.startswith(
        "OK: no configuration file (none given, $VOICED_CONFIG not set, /etc/voiced/config.toml "
        "absent): the defaults, "
    )


SANDWICH = (REPO / "robot" / "cells" / "sandwich.toml").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("wrong", "right", "line"),
    [
        ('supply = "supply_cheese"', 'supply = "supply_chese"',
         "objects.cheese.supply: unknown supply site 'supply_chese' (supply sites: supply_bread, "
         "supply_meat, supply_cheese, supply_lettuce, supply_tomato); did you mean supply_cheese?"),
        ("at = [250, -250, 0]", "at = [250, -250]",
         "sites.supply_bread.at: expected an array of 3 finite numbers [x, y, z], got an array "
         "of 2"),
        ('left = "assembly_left"', 'left = "assembly_lft"',
         "zone_aliases.left: unknown zone 'assembly_lft' (zones: assembly_left, assembly_fixture, "
         "assembly_right); did you mean assembly_left?"),
        ('kind = "supply"', 'kind = "suply"',
         "sites.supply_bread.kind: unknown site kind 'suply' (expected one of supply, zone, "
         "buffer, arrangement, scatter)"),
        ("height_mm = 5\n", "heigth_mm = 5\n",
         "objects.cheese.heigth_mm: unknown key 'heigth_mm' (expected one of height_mm, width_mm, "
         "supply, count); did you mean height_mm?"),
    ],
)  # fmt: skip
def test_check_cell_one_mistake_one_line_with_the_nearest_name(
    tmp_path: Path, wrong: str, right: str, line: str
) -> None:
    """A misspelt supply also said "unknown item 'cheese'", a short position also "is outside
    the workspace", a misspelt key also "missing required key"."""
    cell = tmp_path / "cell.toml"
    cell.write_text(SANDWICH.replace(wrong, right, 1), encoding="utf-8")
    proc = run(tmp_path, "check-cell", str(cell))
    assert proc.returncode == 1
    (said,) = proc.stdout.splitlines()
    assert said.split(": ", 1)[1] == line, said


def test_check_config_names_the_cells_mistakes_with_its_own_in_one_run(tmp_path: Path) -> None:
    """A config that does not load still has its cell checked: a newcomer fixing the config's
    mistakes must not find the cell's only on the next run."""
    cell, line = with_unknown_key(tmp_path)
    config = config_naming(tmp_path, cell.name, '[daemon]\nmode = "sometimes"\n')
    proc = run(tmp_path, "check-config", str(config))
    assert proc.returncode == 1
    assert proc.stdout.splitlines()[0].startswith(f"{config}:4: daemon.mode: "), proc.stdout
    assert proc.stdout.splitlines()[1].startswith(f"{cell}:{line}: "), proc.stdout
    assert len(proc.stdout.splitlines()) == 2, proc.stdout
    # A cell file that is not there is the config's mistake, at the key that names it.
    wrong = config_naming(tmp_path, "no-such-cell.toml", '[daemon]\nmode = "sometimes"\n')
    said = run(tmp_path, "check-config", str(wrong)).stdout.splitlines()
    assert len(said) == 2 and said[0].startswith(f"{wrong}:2: cell.name: "), said
    assert "no-such-cell.toml" in said[0] and said[1].startswith(f"{wrong}:4: daemon.mode"), said
