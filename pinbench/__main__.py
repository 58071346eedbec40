"""``python -m pinbench``: the ``pinbench`` command (:mod:`pinbench.cli`)."""
import sys

from pinbench.cli import main

if __name__ == "__main__":
    sys.exit(main())
