"""``python -m affinity.trace``: see :mod:`affinity.trace.cli`."""
import sys

from affinity.trace.cli import main

if __name__ == "__main__":
    sys.exit(main())
