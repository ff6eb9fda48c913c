"""``python -m harness``: the same as the ``harness`` command."""

from harness.cli import main

# guarded: a spawned child process imports this module again as ``__mp_main__``
if __name__ == "__main__":
    main()
