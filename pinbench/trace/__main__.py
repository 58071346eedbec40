"""``pinbench trace``: see :mod:`pinbench.trace.cli`."""
import sys

from pinbench.trace.cli import main

if __name__ == "__main__":
    sys.exit(main())
