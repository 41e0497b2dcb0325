"""``python -m cli``: the same as the ``mabos`` console script."""

from cli.main import main

main()
