"""Re-export of :mod:`kg.models.conversation` (the records the store adapters share), kept importable here."""

from kg.models.conversation import (
    CHARS_PER_TOKEN,
    MAX_MESSAGE,
    Conversation,
    Message,
    MessageInput,
    MessageQuery,
    Role,
    Summary,
    SummaryKind,
    SummaryMethod,
    TokenEstimator,
    estimate_tokens,
)

__all__ = [
    "CHARS_PER_TOKEN",
    "MAX_MESSAGE",
    "Conversation",
    "Message",
    "MessageInput",
    "MessageQuery",
    "Role",
    "Summary",
    "SummaryKind",
    "SummaryMethod",
    "TokenEstimator",
    "estimate_tokens",
]
