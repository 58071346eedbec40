"""``pinbench place``: see :mod:`pinbench.place.cli`."""
import sys

from pinbench.place.cli import main

if __name__ == "__main__":
    sys.exit(main())
