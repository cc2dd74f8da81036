"""User-facing errors.

Everything a user can get wrong (a malformed YAML, an unknown EP, an impossible mapping, a design
space too big to enumerate) raises :class:`HetsimError` with one line that names the file, the
field, the value and what is allowed. The CLI prints that line on stderr and exits with code 2.
"""

from __future__ import annotations


class HetsimError(Exception):
    """A user error: one clear line, exit code 2 at the CLI, never a traceback."""

    exit_code = 2

    def __init__(self, message: str):
        # One line only: the CLI contract is "one clear line".
        super().__init__(" ".join(str(message).split("\n")).strip())
