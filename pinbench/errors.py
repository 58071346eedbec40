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


def _unprintable(char: str) -> bool:
    """A control character (Unicode's Cc: a terminal obeys ESC sequences, CR and backspace,
    and str.splitlines splits at several), a line or paragraph separator, a lone surrogate (no
    text encoding writes it)."""
    code = ord(char)
    return code < 0x20 or 0x7f <= code <= 0x9f or code in (0x2028, 0x2029) \
        or 0xd800 <= code <= 0xdfff


def escaped(text: str) -> str:
    """``text`` with its unprintable characters written as Python's escapes, so that it is one
    line and reaches a terminal as text, whatever a file or a program's output held.

    >>> escaped("bad\\x1b[2J\\tline\\nnext\\udcff")
    'bad\\\\x1b[2J\\\\tline\\\\nnext\\\\udcff'
    """
    return "".join(repr(char)[1:-1] if _unprintable(char) else char for char in text)
