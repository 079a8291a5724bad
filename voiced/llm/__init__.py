"""The LLM tier (seed 000's three passes, seed 003's resolver, seed 001's intent classifier,
creative commands), over the Anthropic Messages API. Offline when $ANTHROPIC_API_KEY is unset:
`LlmClient.from_env` returns None and creative commands use the offline generator.

Import the modules themselves (`voiced.llm.client`, `voiced.llm.sequence`, ...): this package
imports nothing, so that `voiced.config` can read `voiced.llm.settings` without pulling in the
client and everything it needs.
"""
