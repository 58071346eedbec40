"""``python -m pinbench.measure``: the measuring process (:mod:`pinbench.commands.measure`).
The stop signals are handled before the imports, so that a stop while they run is said in
one line too (:func:`interrupt.install`)."""
import sys

from pinbench.measure import interrupt

interrupt.install()

from pinbench.commands.measure import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
