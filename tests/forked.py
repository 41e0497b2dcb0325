"""A script prelude for tests that ask one interpreter several questions, each from the same starting state:
``fork_each(items, answer)`` runs ``answer(item)`` in a child forked per item (each child starts from the state the
script reached, as a fresh process doing the same work would, without paying for one per question) and stops at the
first child that fails, after printing its traceback. Prepend :data:`FORK_EACH` to the script's own code."""

FORK_EACH = """
import os, sys, traceback


def fork_each(items, answer):
    for item in items:
        sys.stdout.flush()
        if (pid := os.fork()) == 0:
            try:
                answer(item)
                sys.stdout.flush()
                os._exit(0)
            except BaseException:
                traceback.print_exc()
                sys.stderr.flush()
                os._exit(1)
        assert os.waitpid(pid, 0)[1] == 0, item
"""
