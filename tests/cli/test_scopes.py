"""``scope grant|revoke|list`` and their effect on what an agent can read."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from conftest import Mabos

SCOPE = "project:launch"


def test_a_grant_lets_a_second_agent_read_a_project_scope(ready: Mabos) -> None:
    ready.ok("scope", "grant", "sales-agent", SCOPE, "--by", "admin")
    ready.ok("fact", "assert", "--agent", "sales-agent", "launch", "hasBudget", "100", "--scope", SCOPE)

    refused = ready("fact", "query", "--agent", "finance-agent", "--scope", SCOPE)
    assert refused.exit_code == 1
    assert refused.stderr == f"error: scope: agent 'finance-agent' may not read '{SCOPE}'\n"

    granted = ready.json("scope", "grant", "finance-agent", SCOPE, "--by", "sales-agent")
    assert (granted["agent_id"], granted["scope"], granted["granted_by"]) == ("finance-agent", SCOPE, "sales-agent")
    seen = ready.json("fact", "query", "--agent", "finance-agent", "--scope", SCOPE)
    assert [f["subject"] for f in seen] == ["launch"]

    listing = ready.json("scope", "list", "finance-agent")
    assert listing["readable"] == ["global", "agent:finance-agent", SCOPE]
    assert [g["scope"] for g in listing["grants"]] == [SCOPE]
    assert (
        f"finance-agent can read: global, agent:finance-agent, {SCOPE}"
        in ready.ok("scope", "list", "finance-agent").stdout
    )

    revoked = ready.json("scope", "revoke", "finance-agent", SCOPE, "--by", "sales-agent")
    assert revoked == {"agent_id": "finance-agent", "scope": SCOPE, "revoked": True}
    assert ready("fact", "query", "--agent", "finance-agent", "--scope", SCOPE).exit_code == 1
    again = ready.json("scope", "revoke", "finance-agent", SCOPE, "--by", "sales-agent")
    assert again["revoked"] is False


def test_granting_the_own_scope_is_refused(ready: Mabos) -> None:
    result = ready("scope", "grant", "sales-agent", "agent:sales-agent", "--by", "admin")
    assert result.exit_code == 1 and result.stderr.startswith("error: scope: ")
