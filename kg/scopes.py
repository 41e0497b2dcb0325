"""Who may read and write which scope (design §2), and which scope a derived record takes.

An agent reads and writes ``global``, its own ``agent:<id>`` scope and every scope granted to it;
nothing else. Stores never decide this: services compute the scopes here and pass them down.

**Derived records** (a consolidated memory, a dedup merge, a summary, an extracted or inferred record)
take a scope no wider than the narrowest of their sources, and records of different non-global scopes are
never merged. ``global`` is the widest scope (every agent reads it); ``project:``, ``user:`` and ``custom:``
scopes are narrower (their grantees); ``agent:<id>`` is the narrowest (one agent). Two different non-global
scopes (``project:x`` and ``agent:a``, or ``project:x`` and ``project:y``) have no common scope that is
within both audiences and revocable with each: a grant of ``project:x`` withdrawn later must take ``x``'s
content away, which a copy in ``agent:a`` would keep. So :func:`narrowest_scope` answers None for such a
mix, and producers keep those sources apart (:func:`same_scope_groups`) or leave them out. Every producer
calls these functions; none decides the scope of what it derives on its own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar

from kg.clock import Clock
from kg.errors import InputError, NotFoundError, ScopeError
from kg.models import AGENT_ID_RE, SCOPE_RE, Grant, agent_scope, parse
from kg.ports import GraphStore


class ScopePolicy:
    """Scope checks and grants over a store."""

    def __init__(self, store: GraphStore, clock: Clock) -> None:
        self.store = store
        self.clock = clock

    def require_agent(self, agent_id: str) -> None:
        """Raise a clear error for a malformed or unknown agent id."""
        if not AGENT_ID_RE.match(agent_id or ""):
            raise InputError("agent", f"must match [a-z0-9][a-z0-9_-]{{0,63}}, got {agent_id[:80]!r}")
        if not self.store.agents.exists(agent_id):
            raise NotFoundError(f"agent: no agent {agent_id!r} (create it with 'mabos agent add {agent_id}')")

    def readable(self, agent_id: str) -> list[str]:
        """Scopes an agent may read: global, its own, and its grants."""
        self.require_agent(agent_id)
        scopes = ["global", agent_scope(agent_id)]
        scopes += [g.scope for g in self.store.scopes.grants(agent_id) if g.scope not in scopes]
        return scopes

    def check_write(self, agent_id: str, scope: str | None) -> str:
        """The scope to write (default: the agent's own); ScopeError if not allowed."""
        readable = self.readable(agent_id)  # first: a bad agent id is reported as such, not as a bad scope
        target = scope or agent_scope(agent_id)
        if not SCOPE_RE.match(target):
            raise InputError("scope", f"must be global, agent:<id>, project:<name>, user:<name> or custom:<name>, "
                                      f"got {target[:80]!r}")  # fmt: skip
        if (refusal := write_refusal(agent_id, target, readable)) is not None:
            raise ScopeError(f"scope: {refusal}")
        return target

    def write_refusal(self, agent_id: str, scope: str) -> str | None:
        """Why ``agent_id`` may not write ``scope`` (None: it may), the check of :meth:`check_write`.

        Unlike :meth:`check_write` it also answers for a valid agent id that does not exist yet (an import
        about to create the agent): such an agent holds no grants, so it may write ``global`` and its own
        scope only.
        """
        if not AGENT_ID_RE.match(agent_id or ""):
            raise InputError("agent", f"must match [a-z0-9][a-z0-9_-]{{0,63}}, got {agent_id[:80]!r}")
        grants = self.store.scopes.grants(agent_id) if self.store.agents.exists(agent_id) else []
        return write_refusal(agent_id, scope, ["global", agent_scope(agent_id), *(g.scope for g in grants)])

    def narrow(self, agent_id: str, scope: str | None) -> list[str]:
        """Readable scopes, or just ``scope`` when given and readable."""
        scopes = self.readable(agent_id)
        if scope is None:
            return scopes
        if scope not in scopes:
            raise ScopeError(f"scope: agent {agent_id!r} may not read {scope!r}")
        return [scope]

    def grant(self, agent_id: str, scope: str, *, granted_by: str) -> Grant:
        """Let ``agent_id`` read and write ``scope``."""
        self.require_agent(agent_id)
        grant = parse(Grant, {"agent_id": agent_id, "scope": scope, "granted_by": granted_by,
                              "created_at": self.clock.now()})  # fmt: skip
        if grant.scope in ("global", agent_scope(agent_id)):
            raise InputError("scope", f"{scope!r} is always readable by {agent_id!r}; nothing to grant")
        return self.store.scopes.grant(grant)

    def revoke(self, agent_id: str, scope: str, *, revoked_by: str) -> bool:
        """Withdraw a grant; whether there was one."""
        self.require_agent(agent_id)
        grant = parse(
            Grant, {"agent_id": agent_id, "scope": scope, "granted_by": revoked_by, "created_at": self.clock.now()}
        )
        return self.store.scopes.revoke(agent_id, grant.scope, revoked_by=grant.granted_by)

    def grants(self, agent_id: str) -> list[Grant]:
        """Grants held by an agent."""
        self.require_agent(agent_id)
        return self.store.scopes.grants(agent_id)


def write_refusal(agent_id: str, scope: str, writable: Sequence[str]) -> str | None:
    """Why ``agent_id`` may not write ``scope`` given the scopes it may write (None: it may)."""
    if scope in writable:
        return None
    return f"agent {agent_id!r} may not write {scope!r} (not its own, global or granted)"


# ------------------------------------------------------------------------------------ derived records

GLOBAL = "global"
T = TypeVar("T")


def narrowest_scope(scopes: Iterable[str]) -> str | None:
    """The scope of a record derived from records in ``scopes`` (the module docstring has the rule).

    ``global`` when every source is global, the one non-global scope when all non-global sources share it,
    and None when they mix two different non-global scopes: no single scope then, do not merge them.

    Raises:
        InputError: no source scope at all (a derived record has at least one source).

    Example:
        >>> narrowest_scope(["global", "project:x", "global"])
        'project:x'
        >>> narrowest_scope(["project:x", "agent:a"]) is None
        True
    """
    distinct = set(scopes)
    if not distinct:
        raise InputError("scopes", "a derived record needs at least one source scope")
    narrow = distinct - {GLOBAL}
    if not narrow:
        return GLOBAL
    return narrow.pop() if len(narrow) == 1 else None


def derived_scope_allowed(scope: str, sources: Iterable[str]) -> bool:
    """Whether a record derived from records in ``sources`` may be written in ``scope``.

    Only the sources' narrowest scope qualifies (any scope when all sources are global, since ``global``
    content is already everyone's): a derived record is never wider than a source, and it never moves a
    source's content from one non-global audience into another.
    """
    narrow = narrowest_scope(sources)
    return narrow is not None and narrow in (GLOBAL, scope)


def same_scope_groups(items: Iterable[T], scope_of: Callable[[T], str]) -> list[list[T]]:
    """``items`` split by scope (each group in the input order; groups in the order first seen): what a
    producer may merge is inside one group."""
    groups: dict[str, list[T]] = {}
    for item in items:
        groups.setdefault(scope_of(item), []).append(item)
    return list(groups.values())


def merge_refusal(scopes: Iterable[str]) -> str | None:
    """Why records of ``scopes`` may not be merged into one (None: they share one scope, they may).

    Merging (one record replacing or strengthening others) is stricter than deriving: the result takes the
    place of its sources for their audience, so they must all have the same one.
    """
    distinct = sorted(set(scopes))
    if len(distinct) <= 1:
        return None
    return f"records of scopes {', '.join(map(repr, distinct))} are never merged (merge only within one scope)"
