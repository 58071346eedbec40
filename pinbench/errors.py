"""The one family of pinbench's user-facing errors.

Every error a user can cause or fix (a bad campaign file, an unusable topology, matrix or
input file, a helper ``pinbench setup`` has not built...) derives from :class:`PinbenchError`
and says what is wrong in its first line. The command layer (:mod:`pinbench.cli`) catches it
once: ``pinbench COMMAND: error: MESSAGE`` on stderr, exit status 2; anything else is a bug and
keeps its traceback (ReFrame's ``ReframeError`` and its front end work the same way). The
classes keep their older bases too (``ValueError``, ``RuntimeError``), so that code catching
those still catches them.

This module imports nothing: the measuring process imports it.
"""


class PinbenchError(Exception):
    """An error the user can fix: its message is one line saying what and, where it helps,
    what to do."""


class UsageError(PinbenchError):
    """A command's arguments that cannot be used (an unknown option, a missing argument)."""


class InputError(PinbenchError, ValueError):
    """An input (a file, a campaign, a value) that cannot be read or used."""


def first_line(error: BaseException) -> str:
    """The first line of an error's message (its class name when it has none).

    >>> first_line(InputError("runs.csv: no such file\\nmore"))
    'runs.csv: no such file'
    """
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__
