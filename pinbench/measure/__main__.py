"""``python -m pinbench.measure``: see :mod:`pinbench.measure.cli`; a launcher that
``pinbench setup`` has not built ends it in one line."""
import sys

from pinbench.measure.cli import main
from pinbench.native import NotBuilt

if __name__ == "__main__":
    try:
        sys.exit(main())
    except NotBuilt as exc:
        sys.exit(f"pinbench: {exc}")
