"""``python -m pinbench.measure``: see :mod:`pinbench.measure.cli`."""
import sys

from pinbench.measure.cli import main

if __name__ == "__main__":
    sys.exit(main())
