"""Turning pydantic and YAML errors into the one-line messages hetsim promises its users."""

from __future__ import annotations

import os
import re
import secrets
import sys
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
                got = f" (got {_short(repr(value), 80)})"   # a 100,000-character value stays one short line
        lines.append(f"{where}{msg}{got}")
    return lines


def one_line(source: str, exc: ValidationError) -> HetsimError:
    lines = error_lines(source, exc)
    more = f" (and {len(lines) - 1} more)" if len(lines) > 1 else ""
    return HetsimError(lines[0] + more)


#: Limits of what :func:`read_yaml` reads. A workload of 100,000 ops is ~10 MB of YAML and ~2
#: million nodes; these are far past any file hetsim ships or imports, and far below what makes a
#: run take minutes or the machine swap.
MAX_YAML_BYTES = 64 << 20
#: Nodes of the document once every alias is expanded (what validating it walks): an alias bomb
#: ("billion laughs") is refused here, while it is composed, before anything expands it.
MAX_YAML_NODES = 5_000_000
#: Nesting of collections (the composer and the validators recurse once per level).
MAX_YAML_DEPTH = 100

_TEXT_HINTS = {".onnx": "an ONNX model: import it first (hetsim workloads import MODEL.onnx --out W.yaml)",
               ".png": "an image", ".csv": "a CSV table", ".json": "JSON"}


def read_yaml(path: Path) -> Any:
    """Read a YAML or JSON file; any failure becomes a one-line HetsimError naming the file.

    Refused in one line each: a file that is not text (a NUL byte, bytes that are not UTF-8;
    UTF-16 and UTF-32 with a byte-order mark are decoded), larger than :data:`MAX_YAML_BYTES`,
    empty, malformed, with a duplicate key, nested deeper than :data:`MAX_YAML_DEPTH`, or whose
    aliases expand past :data:`MAX_YAML_NODES` nodes (counted as the document is composed, before
    any expansion). Numbers follow YAML 1.2 as well as 1.1: ``1e6`` is a float (PyYAML's 1.1
    rules read it as a string).
    """
    path = Path(path)
    try:
        size = path.stat().st_size
        if size > MAX_YAML_BYTES:
            raise HetsimError(f"{path}: {size / 2**20:.0f} MiB is larger than the {MAX_YAML_BYTES >> 20} MiB "
                              "hetsim reads as YAML")
        data = path.read_bytes()
    except FileNotFoundError:
        raise HetsimError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise HetsimError(f"{path}: is a directory, not a file") from None
    except OSError as e:
        raise HetsimError(f"{path}: cannot read ({e.strerror or e})") from None
    text = decode_text(data, str(path), _TEXT_HINTS.get(path.suffix.lower()))
    if not text.strip() or all(line.lstrip().startswith("#") or not line.strip()
                               for line in text.splitlines()):
        raise HetsimError(f"{path}: the file is empty; expected a YAML mapping (key: value lines)")
    loaded = load_yaml(text, str(path))
    if not isinstance(loaded, dict):
        raise HetsimError(f"{path}: expected a mapping at the top level, got {type(loaded).__name__}")
    return loaded


def check_path(text: str, what: str) -> None:
    """Refuse, in one line, a name or path no file can have: empty, with a NUL byte, longer than
    the system allows (a mapping string is probed as a path first: it must not crash on that)."""
    if not text:
        raise HetsimError(f"{what}: an empty name; give a name or a file path")
    if "\x00" in text:
        raise HetsimError(f"{what}: {text[:40]!r}... contains a NUL character, which no name or path has")
    if len(os.fsencode(text)) > 4096 or any(len(os.fsencode(part)) > 255 for part in Path(text).parts):
        raise HetsimError(f"{what}: {text[:40]!r}... is too long for a name or file path")


def check_output_path(path: str | os.PathLike | None, flag: str) -> None:
    """Refuse, before any work, an output path no file can be written to: empty, a directory, or
    under a file. (None: the option was not given.)"""
    if path is None:
        return
    text = os.fspath(path)
    if str(text) == "":
        raise HetsimError(f"{flag}: an empty file name; give a path such as results/out.csv")
    check_path(str(text), flag)
    p = Path(text)
    if p.is_dir():
        raise HetsimError(f"{flag} {text}: is a directory; give a file name inside it")
    for parent in p.parents:
        if parent.exists():
            if not parent.is_dir():
                raise HetsimError(f"{flag} {text}: {parent} is a file, not a folder")
            break


def check_output_dir(path: str | os.PathLike | None, flag: str) -> None:
    """Refuse, before any work, a folder no file can be written into: empty, a file, or under a
    file. (None: the option was not given; a folder that does not exist yet is made.)"""
    if path is None:
        return
    text = os.fspath(path)
    if str(text) == "":
        raise HetsimError(f"{flag}: an empty folder name; give a path such as results/autodice")
    check_path(str(text), flag)
    p = Path(text)
    if p.exists() and not p.is_dir():
        raise HetsimError(f"{flag} {text}: is a file; give a folder")
    for parent in p.parents:
        if parent.exists():
            if not parent.is_dir():
                raise HetsimError(f"{flag} {text}: {parent} is a file, not a folder")
            break


def decode_text(data: bytes, source: str, hint: str | None = None) -> str:
    """The text of a file's bytes: UTF-8 (a byte-order mark is dropped), or UTF-16/32 with their
    byte-order mark. Anything else is one line: binary, or not UTF-8."""
    for bom, codec in ((b"\xef\xbb\xbf", "utf-8-sig"), (b"\xff\xfe\x00\x00", "utf-32"),
                       (b"\x00\x00\xfe\xff", "utf-32"), (b"\xff\xfe", "utf-16"), (b"\xfe\xff", "utf-16")):
        if data.startswith(bom):
            try:
                return data.decode(codec)
            except UnicodeDecodeError as e:
                raise HetsimError(f"{source}: not valid {codec.upper()} text (byte-order mark, then "
                                  f"bad bytes at offset {e.start})") from None
    what = f" (it looks like {hint})" if hint else ""
    nul = data.find(b"\x00")
    if nul >= 0:
        raise HetsimError(f"{source}: a binary file (a NUL byte at offset {nul}){what}; expected a "
                          "YAML or JSON text file")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise HetsimError(f"{source}: not UTF-8 text (byte 0x{data[e.start]:02x} at offset {e.start})"
                          f"{what}; save it as UTF-8") from None


def load_yaml(text: str, source: str = "<yaml>") -> Any:
    """Parse YAML ``text`` with hetsim's loader (see :func:`read_yaml`); errors name ``source``."""
    loader = None
    try:
        loader = _Loader(text)
        return loader.get_single_data()
    except yaml.reader.ReaderError as e:
        char = f"U+{e.character:04X}" if isinstance(e.character, int) else repr(e.character)
        raise HetsimError(f"{source}: not YAML text: character {char} at offset {e.position} is a "
                          "control character YAML does not allow") from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(e, "problem", None) or "invalid YAML"
        context = getattr(e, "context", None)
        kind = "refused YAML" if isinstance(e, _Refused) else "malformed YAML"
        if isinstance(e, yaml.constructor.ConstructorError) and context and not isinstance(e, _Refused):
            problem = f"{context}: {problem}"
        raise HetsimError(f"{source}: {kind}{where}: {_short(problem, 200)}") from None
    except RecursionError:
        raise HetsimError(f"{source}: refused YAML: nested too deeply to read") from None
    finally:
        if loader is not None:
            loader.dispose()


class _Refused(yaml.constructor.ConstructorError):
    """A document hetsim will not read (duplicate key, alias bomb, too deep, too long a number)."""


class _Loader(yaml.SafeLoader):
    """PyYAML's safe loader, stricter: duplicate keys, alias expansion past
    :data:`MAX_YAML_NODES`, nesting past :data:`MAX_YAML_DEPTH` and integers past Python's digit
    limit are refused with the line they are on; YAML 1.2 floats (``1e6``) are floats."""

    def __init__(self, stream):
        super().__init__(stream)
        self._nodes = 0                      # nodes of the document with every alias expanded
        self._depth = 0
        self._size: dict[int, int] = {}      # id(node) -> its expanded size, once composed

    def compose_node(self, parent, index):
        if self.check_event(yaml.events.AliasEvent):
            event = self.peek_event()
            node = super().compose_node(parent, index)
            size = self._size.get(id(node))
            if size is None:   # the anchor is still being composed: the alias is inside itself
                raise _Refused(None, None, f"alias *{event.anchor} refers to a collection it is "
                               "inside of (a recursive structure)", event.start_mark)
            self._count(size, event.start_mark)
            return node
        event = self.peek_event()
        self._depth += 1
        if self._depth > MAX_YAML_DEPTH:
            raise _Refused(None, None, f"nested deeper than {MAX_YAML_DEPTH} levels", event.start_mark)
        before = self._nodes
        try:
            node = super().compose_node(parent, index)
        finally:
            self._depth -= 1
        self._count(1, event.start_mark)
        self._size[id(node)] = self._nodes - before
        return node

    def _count(self, n: int, mark) -> None:
        self._nodes += n
        if self._nodes > MAX_YAML_NODES:
            raise _Refused(None, None, f"aliases expand the document past {MAX_YAML_NODES:,} nodes "
                           "(an alias bomb?); refused before expanding it", mark)

    def construct_mapping(self, node, deep=False):
        if isinstance(node, yaml.MappingNode):
            seen: dict[tuple[str, str], Any] = {}
            for key_node, _ in node.value:
                if isinstance(key_node, yaml.ScalarNode) and key_node.tag != "tag:yaml.org,2002:merge":
                    key = (key_node.tag, key_node.value)
                    if key in seen:
                        raise _Refused(None, None, f"duplicate key {_short(key_node.value, 60)!r} (first at "
                                       f"line {seen[key].line + 1})", key_node.start_mark)
                    seen[key] = key_node.start_mark
        return super().construct_mapping(node, deep=deep)

    def construct_yaml_int(self, node):
        digits = len(str(node.value))
        limit = sys.get_int_max_str_digits() if hasattr(sys, "get_int_max_str_digits") else 4300
        if limit and digits > limit:
            raise _Refused(None, None, f"a number of {digits} digits (at most {limit})", node.start_mark)
        return super().construct_yaml_int(node)


_Loader.add_constructor("tag:yaml.org,2002:int", _Loader.construct_yaml_int)
# YAML 1.2 floats without a dot or without an exponent sign (1e6, 2E-3), which YAML 1.1 and so
# PyYAML read as strings: users write them as numbers.
_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:[0-9][0-9_]*)(?:\.[0-9_]*)?[eE][-+]?[0-9]+$"),
    list("-+0123456789"))


def _short(text: str, n: int) -> str:
    text = str(text)
    return text if len(text) <= n else text[:n] + "..."


@contextmanager
def atomic_write(path: str | os.PathLike, mode: str = "w") -> Iterator[Any]:
    """Write to a temporary file beside ``path`` and move it into place only on success, so an
    error, a Ctrl-C or a kill never leaves a half-written result file: ``path`` is either its old
    self or complete. The file gets the permissions the umask gives a new file (0644 under the
    usual umask 022; ``tempfile.mkstemp`` would give 0600). Missing parent folders are made. A
    kill -9 can leave the hidden temporary ``.<name>.<random>.tmp`` behind (never ``path``).

    Problems with the path (empty, a directory, a parent that is a file, no permission, a full
    disk) are one-line errors (HetsimError) naming it."""
    if str(path) == "":
        raise HetsimError("an output file name is empty; give a path such as results/out.csv")
    path = Path(path)
    if path.is_dir():
        raise HetsimError(f"{path}: is a directory; give a file name inside it")
    tmp = path.parent / f".{path.name}.{secrets.token_hex(6)}.tmp"
    # One try from the file's creation on: a Ctrl-C that lands just after os.open returns (Python
    # raises it at the next bytecode, the moment the file exists) still removes it.
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # 0o666 & ~umask, as open() gives a new file; O_EXCL: a name nobody else holds.
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o666)
        with os.fdopen(fd, mode) as f:
            yield f
        os.replace(tmp, path)
    except BaseException as e:
        try:
            os.unlink(tmp)
        except OSError:   # not made yet, or gone
            pass
        if isinstance(e, OSError):
            raise HetsimError(f"{path}: cannot write ({e.strerror or e})") from None
        raise


_WARNED: set[str] = set()


def note_once(message: str) -> None:
    """Print ``hetsim: note: message`` on stderr, once per process per message."""
    import sys

    if message in _WARNED:
        return
    _WARNED.add(message)
    print(f"hetsim: note: {message}", file=sys.stderr)


def warn_once(message: str) -> None:
    """Print ``hetsim: warning: message`` on stderr, once per process per message (a platform
    loaded a hundred times by a sweep warns once)."""
    import sys

    if message in _WARNED:
        return
    _WARNED.add(message)
    print(f"hetsim: warning: {message}", file=sys.stderr)
