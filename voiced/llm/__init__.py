"""The LLM tier (seed 000's three passes, seed 003's resolver, seed 001's intent classifier,
creative commands), over the Anthropic Messages API. Offline when $ANTHROPIC_API_KEY is unset:
`LlmClient.from_env` returns None and creative commands use the offline generator."""

from voiced.llm.classifier import AnthropicClassifier, Intent, IntentClassifier
from voiced.llm.client import LlmClient, LlmReply, PromptBlock
from voiced.llm.creative import Axes, CreativeAssignment, assign, check, choose_axes, is_creative
from voiced.llm.creative_gen import CreativeUnavailable, generate, offline_interpretation
from voiced.llm.policy import LlmCallError
from voiced.llm.resolver import PhraseResolver, Resolution
from voiced.llm.sequence import LlmOutcome, LlmUsage, SequenceInterpreter
from voiced.llm.settings import LlmSettings

__all__ = [
    "AnthropicClassifier",
    "Axes",
    "CreativeAssignment",
    "CreativeUnavailable",
    "Intent",
    "IntentClassifier",
    "LlmCallError",
    "LlmClient",
    "LlmOutcome",
    "LlmReply",
    "LlmSettings",
    "LlmUsage",
    "PhraseResolver",
    "PromptBlock",
    "Resolution",
    "SequenceInterpreter",
    "assign",
    "check",
    "choose_axes",
    "generate",
    "is_creative",
    "offline_interpretation",
]
