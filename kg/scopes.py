"""Who may read and write which scope (design §2).

An agent reads and writes ``global``, its own ``agent:<id>`` scope and every scope granted to it;
nothing else. Stores never decide this: services compute the scopes here and pass them down.
"""

from __future__ import annotations

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
        if target not in readable:
            raise ScopeError(f"scope: agent {agent_id!r} may not write {target!r} (not its own, global or granted)")
        return target

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
