"""Writing matplotlib figures: the format follows the file's suffix (``.png``, ``.pdf``, ``.svg``),
the file is written atomically, and PDF and SVG carry no date and no random ids, so that the same
figure gives the same bytes (as PNG always did).

    >>> figure_format("results/gantt.svg")
    'svg'

The backend is never switched here: library code draws on ``Figure`` objects through pyplot and
leaves ``matplotlib.use`` to the user (a notebook's inline backend keeps showing plots).
"""

from __future__ import annotations

import os
from pathlib import Path

from hetsim.errors import HetsimError
from hetsim.validation import atomic_write, check_output_path

#: The formats a figure can be written in, by suffix.
FIGURE_FORMATS = ("png", "pdf", "svg")
# What makes PDF and SVG bytes depend on the day and the run: their date, and SVG's random id salt.
_METADATA = {"pdf": {"CreationDate": None}, "svg": {"Date": None}}


def figure_format(path: str | os.PathLike, flag: str = "figure") -> str:
    """The format of the figure file ``path`` from its suffix; one line naming it otherwise."""
    suffix = Path(path).suffix.lower().lstrip(".")
    if suffix not in FIGURE_FORMATS:
        raise HetsimError(f"{flag} {os.fspath(path)}: a figure is written as its suffix says; "
                          f"allowed: {', '.join('.' + f for f in FIGURE_FORMATS)}")
    return suffix


def check_figure_path(path: str | os.PathLike | None, flag: str) -> None:
    """Refuse, before any work, a figure path that cannot be written or has no figure suffix
    (None: the option was not given)."""
    if path is None:
        return
    check_output_path(path, flag)
    figure_format(path, flag)


def save_figure(fig, path: str | os.PathLike, flag: str = "figure", close: bool = True, **savefig) -> Path:
    """Write ``fig`` to ``path`` in the format its suffix names (``savefig`` keywords such as
    ``dpi`` and ``bbox_inches`` pass through), atomically; close it (pyplot forgets it) unless
    ``close=False``."""
    import matplotlib

    fmt = figure_format(path, flag)
    path = Path(path)
    with matplotlib.rc_context({"svg.hashsalt": "hetsim"}), atomic_write(path, "wb") as f:
        fig.savefig(f, format=fmt, metadata=_METADATA.get(fmt), **savefig)
    if close:
        import matplotlib.pyplot as plt

        plt.close(fig)
    return path
