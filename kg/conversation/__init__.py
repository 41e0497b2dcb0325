"""Conversation memory: a lossless message log, a summary DAG over it, context assembly within a budget.

Records are in :mod:`kg.models.conversation`; the store ports are ``ConversationStore`` and ``SummaryStore``
in :mod:`kg.ports` (the embedded adapter is ``kg/store/sqlite/conversation.py``).
"""
