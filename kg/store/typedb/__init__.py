"""TypeDB 3.x store adapter: the only package of mabos that talks to TypeDB (design.md §1, §3).

``literals`` turns Python values into TypeQL 3 literals and labels for query text; the base schema is
``schema/typedb/base.tql`` (documented in ``docs/typedb-schema.md``).
"""
