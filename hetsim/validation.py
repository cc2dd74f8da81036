"""Turning pydantic and YAML errors into the one-line messages hetsim promises its users."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from hetsim.errors import HetsimError


def error_lines(source: str, exc: ValidationError) -> list[str]:
    """One line per pydantic error: ``source: field.path: message (got value)``."""
    lines = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"])
        msg = err["msg"]
        if msg.startswith("Value error, "):
            msg = msg[len("Value error, "):]
        where = f"{source}: {loc}: " if loc else f"{source}: "
        got = ""
        if err["type"] not in ("missing",) and loc and "input" in err:
            value = err["input"]
            if not isinstance(value, dict | list):
                got = f" (got {value!r})"
        lines.append(f"{where}{msg}{got}")
    return lines


def one_line(source: str, exc: ValidationError) -> HetsimError:
    lines = error_lines(source, exc)
    more = f" (and {len(lines) - 1} more)" if len(lines) > 1 else ""
    return HetsimError(lines[0] + more)


def read_yaml(path: Path) -> Any:
    """Read a YAML or JSON file; any failure becomes a one-line HetsimError naming the file."""
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise HetsimError(f"{path}: no such file") from None
    except OSError as e:
        raise HetsimError(f"{path}: cannot read ({e.strerror})") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(e, "problem", None) or "invalid YAML"
        raise HetsimError(f"{path}: malformed YAML{where}: {problem}") from None
    if not isinstance(data, dict):
        raise HetsimError(f"{path}: expected a mapping at the top level, got {type(data).__name__}")
    return data


@contextmanager
def atomic_write(path: str | os.PathLike, mode: str = "w") -> Iterator[Any]:
    """Write to a temporary file beside ``path`` and move it into place only on success, so an
    error never leaves a half-written result file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, mode) as f:
            yield f
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


_WARNED: set[str] = set()


def warn_once(message: str) -> None:
    """Print ``hetsim: warning: message`` on stderr, once per process per message (a platform
    loaded a hundred times by a sweep warns once)."""
    import sys

    if message in _WARNED:
        return
    _WARNED.add(message)
    print(f"hetsim: warning: {message}", file=sys.stderr)
