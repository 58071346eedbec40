"""``python -m pinbench.measure``: see :mod:`pinbench.measure.cli`; a launcher that
``pinbench setup`` has not built ends it in one line. The stop signals are handled before the
imports, so that a stop while they run is said in one line too (:func:`interrupt.install`)."""
import sys

from pinbench.measure import interrupt

interrupt.install()

from pinbench.measure.cli import main  # noqa: E402
from pinbench.native import NotBuilt  # noqa: E402

if __name__ == "__main__":
    try:
        sys.exit(main())
    except NotBuilt as exc:
        sys.exit(f"pinbench: {exc}")
