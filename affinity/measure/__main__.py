"""``python -m affinity.measure``: see :mod:`affinity.measure.cli`."""
import sys

from affinity.measure.cli import main

if __name__ == "__main__":
    sys.exit(main())
