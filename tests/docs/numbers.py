"""Numbers the docs state that come from the code, for the ``cog`` blocks in README.md and docs/*.md.

``cog -r README.md docs/*.md`` (from the repository root) rewrites them; ``tests/docs/test_generated_numbers.py``
fails when one is stale. Each function returns the text that stands between a block's ``]]] -->`` and
``<!-- [[[end]]] -->``.
"""

from __future__ import annotations

from collections import Counter

import click


def tool_count() -> int:
    """Tools in the registry (what ``mabos serve --mcp`` serves)."""
    from cli import tools  # noqa: PLC0415

    return len(tools.REGISTRY)


def seed_methods() -> str:
    """``32 methods in 6 categories`` (the seed's catalogue)."""
    from reasoning.router.catalogue import list_methods, method_ids  # noqa: PLC0415

    seed = method_ids(seed_only=True)
    categories = {m.category for m in list_methods() if m.id in seed}
    return f"{len(seed)} methods in {len(categories)} categories"


def extension_methods() -> int:
    """Methods of the ``extension`` category (prompt only)."""
    from reasoning.router.catalogue import method_ids  # noqa: PLC0415

    return len(method_ids()) - len(method_ids(seed_only=True))


def engine_kinds() -> Counter[str]:
    """Seed methods by engine (builtin, graph)."""
    from reasoning.router.catalogue import list_methods, method_ids  # noqa: PLC0415

    seed = set(method_ids(seed_only=True))
    return Counter(str(m.engine) for m in list_methods() if m.id in seed)


def command_count() -> int:
    """Leaf commands of the ``mabos`` CLI."""
    from cli.main import cli  # noqa: PLC0415

    def leaves(group: click.Command, ctx: click.Context) -> int:
        if not isinstance(group, click.Group):
            return 1
        return sum(leaves(group.get_command(ctx, name), ctx) for name in group.list_commands(ctx)  # type: ignore[arg-type]
                   if group.get_command(ctx, name) is not None)  # fmt: skip

    return leaves(cli, click.Context(cli))


def declared_tool_bounds() -> int:
    """Declared bounds (``ge``, ``le``, ``max_length`` ...) of every tool input model: what
    ``tests/reliability/test_limits.py::test_declared_tool_limit_at_the_boundary`` checks one by one."""
    from tests.reliability.test_limits import declared_limits  # noqa: PLC0415

    return len(declared_limits())


def ten_megabyte_fields() -> str:
    """``N fields of M tools``: the string fields the 10 MB check of ``tests/reliability/test_bad_input.py`` fills."""
    from cli import tools  # noqa: PLC0415
    from tests.reliability.test_bad_input import _string_fields  # noqa: PLC0415

    counts = [len(_string_fields(name)) for name in tools.REGISTRY]
    return f"{sum(counts)} fields of {sum(1 for c in counts if c)} tools"
