"""``python -m affinity.place``: see :mod:`affinity.place.cli`."""
import sys

from affinity.place.cli import main

if __name__ == "__main__":
    sys.exit(main())
