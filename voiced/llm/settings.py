"""[llm]: the language-model tier's settings, in the form `voiced.config` reads its sections.

The API key is never a setting: it comes from $ANTHROPIC_API_KEY only, so that it stays out of
config files and `voiced config` dumps. Without it the tier is off (`LlmClient.from_env`).
"""

from __future__ import annotations

import urllib.parse
from dataclasses import dataclass

from voiced.configschema import describe, setting

DEFAULT_MODEL = "claude-haiku-4-5"
"""The newest Haiku the installed SDK lists in its model literals that is also dated (alias of
claude-haiku-4-5-20251001); the SDK also lists "claude-haiku-5-5"."""


def _check_base_url(value: str) -> str | None:
    if not value:
        return None
    parts = urllib.parse.urlsplit(value)
    if parts.scheme in ("http", "https") and parts.netloc:
        return None
    return f'expected an http(s) URL such as "https://api.anthropic.com", got {describe(value)}'


@dataclass(frozen=True)
class LlmSettings:
    """[llm]: the Anthropic Messages API tier (seed 000's three passes, seed 003's resolver)."""

    model: str = setting(DEFAULT_MODEL, "The Anthropic model every LLM call uses.", nonempty=True)
    """Passed through to the API as it is."""
    base_url: str = setting(
        "",
        "The Messages API base URL; empty = $ANTHROPIC_BASE_URL, else the SDK's default.",
        check=_check_base_url,
    )
    """A proxy or a local test server; the SDK appends /v1/messages."""
    timeout: float = setting(
        10.0, "Seconds one API attempt may take before it counts as failed.", min=0.1, max=120.0
    )
    """Per attempt, connecting included."""
    retries: int = setting(
        2,
        "Further attempts after a failed one (connection error, timeout, HTTP 429 or 5xx).",
        min=0,
        max=5,
    )
    """Attempts after the first; backoff as in voiced.targets.retry."""
    command_budget: float = setting(
        25.0,
        "Seconds all LLM passes of one spoken command may take together; past it the command "
        "falls back (pass 3 is dropped, not the whole answer).",
        min=1.0,
        max=300.0,
    )
    """The operator is waiting: a bound on retries x passes."""
    structured_output: bool = setting(
        True,
        "Ask for JSON-schema structured output (output_config). Off: plain text, parsed leniently.",
    )
    """Some proxies and older models reject output_config."""
    prompt_caching: bool = setting(
        True, "Mark the static part of each prompt for prompt caching (cache_control)."
    )
    """The cell's catalogue and the rules change only when the cell does."""
    send_temperature: bool = setting(
        False,
        "Send a sampling temperature (0; 1.0 for creative commands). Anthropic API "
        "version 2026-10-21, which the installed SDK speaks, refuses every temperature with HTTP "
        "400, so this is for gateways that still accept it; when refused it is dropped.",
    )
    """Off: the prompts carry the intent (deterministic answers; a random creative variation)."""
    llm_validation: bool = setting(
        False,
        "Also run the model's validation pass. Its verdict is never trusted alone: every fix "
        "it proposes is re-checked by the deterministic validator, which always runs.",
    )
    """Costs one more call per command."""
