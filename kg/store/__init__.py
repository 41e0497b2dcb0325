"""The store adapters: the embedded SQLite store (:mod:`kg.store.sqlite`, the default and the local source of
truth) and TypeDB 3.x (:mod:`kg.store.typedb`). Each implements the ports of :mod:`kg.ports`; they import only
the shared kernel (models, ports, errors, ids, clock, regex), never a feature (an import-linter contract)."""
