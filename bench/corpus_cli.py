"""The command line the corpus benchmarks share (`bench.talkover`, `bench.stops`): which
corpus, where the figures go, how many daemons at once."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from bench.corpus import ROOT

RESULTS = ROOT / "results"


def parser(doc: str) -> argparse.ArgumentParser:
    """--quick | --dev, --json, --out, --jobs; `doc` is the module's docstring."""
    made = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    which = made.add_mutually_exclusive_group()
    which.add_argument("--quick", action="store_true", help="two runs, for CI")
    which.add_argument("--dev", action="store_true", help="the tuning corpus (not reported)")
    made.add_argument("--json", type=Path, help="also write the figures here")
    made.add_argument("--out", type=Path, help="report directory (default bench/results; "
                      "none for --quick and --dev)")  # fmt: skip
    made.add_argument("--jobs", type=int, default=2)
    return made


def write(args: argparse.Namespace, name: str, markdown: str, report: dict[str, Any]) -> None:
    """Print the report; write `report` (figures and records) to --json and, for a full run of
    the test corpus or with --out, `<name>.md` and `<name>.json` to the report directory."""
    print(markdown)
    if args.json is not None:
        args.json.write_text(json.dumps(report, indent=1), encoding="utf-8")
    out = args.out if args.out is not None else (None if args.quick or args.dev else RESULTS)
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        (out / f"{name}.md").write_text(markdown, encoding="utf-8")
        (out / f"{name}.json").write_text(json.dumps(report, indent=1), encoding="utf-8")
