"""Turning pydantic and YAML errors into the one-line messages hetsim promises its users."""

from __future__ import annotations

import json
import math
import os
import re
import secrets
import stat
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from hetsim.errors import HetsimError


def error_lines(source: str, exc: ValidationError, describe=None) -> list[str]:
    """One line per pydantic error: ``source: field.path: message (got value)``. ``describe(err)``,
    when given (:class:`hetsim.keypaths.Describe`), gives the path (list entries by name, as ``--set``
    writes them) and, for an unknown key, the message with the key it most likely meant."""
    lines = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"])
        msg = err["msg"]
        if msg.startswith("Value error, "):
            msg = msg[len("Value error, "):]
        if describe is not None:
            loc, better = describe(err)
            msg = better or msg
        where = f"{source}: {loc}: " if loc else f"{source}: "
        got = ""
        if err["type"] not in ("missing",) and loc and "input" in err:
            value = err["input"]
            if not isinstance(value, dict | list):
                got = f" (got {_short(repr(value), 80)})"   # a 100,000-character value stays one short line
        lines.append(f"{where}{msg}{got}")
    return lines


def one_line(source: str, exc: ValidationError, describe=None) -> HetsimError:
    lines = error_lines(source, exc, describe)
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
    data = read_input(path, MAX_YAML_BYTES, "YAML")
    text = decode_text(data, str(path), _TEXT_HINTS.get(path.suffix.lower()))
    if not text.strip() or all(line.lstrip().startswith("#") or not line.strip()
                               for line in text.splitlines()):
        raise HetsimError(f"{path}: the file is empty; expected a YAML mapping (key: value lines)")
    loaded = load_yaml(text, str(path))
    if not isinstance(loaded, dict):
        raise HetsimError(f"{path}: expected a mapping at the top level, got {type(loaded).__name__}")
    return loaded


#: Largest JSON file hetsim reads (an ONNX Runtime profile of a million node runs is ~400 MB: past
#: this, split it into several files of the same device).
MAX_JSON_BYTES = 512 << 20
#: Largest CSV table (a measured cost table) and ONNX model (protobuf's own 2 GiB limit).
MAX_CSV_BYTES = 256 << 20
MAX_ONNX_BYTES = 2 << 30


def _file_kind(mode: int) -> str | None:
    """What a file that is not a regular file is, for a message (None: a regular file)."""
    for test, kind in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return kind
    return None if stat.S_ISREG(mode) else "not a regular file"


def read_input(path: str | os.PathLike, limit: int, what: str = "") -> bytes:
    """The bytes of an input file, at most ``limit`` of them; one line for anything else.

    Only a regular file is read: a FIFO would block forever and a character device (``/dev/zero``)
    never ends, so both are refused before they are opened (and checked again on the open file,
    opened non-blocking, in case the path changed in between). The size is counted while reading,
    not taken from ``st_size``, which is 0 for ``/proc`` files and devices."""
    path = Path(path)
    try:
        kind = _file_kind(os.stat(path).st_mode)
        if kind is not None:
            raise HetsimError(f"{path}: is {kind}, not a regular file; give a file")
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise HetsimError(f"{path}: no such file") from None
    except OSError as e:
        raise HetsimError(f"{path}: cannot read ({e.strerror or e})") from None
    try:
        kind = _file_kind(os.fstat(fd).st_mode)
        if kind is not None:
            raise HetsimError(f"{path}: is {kind}, not a regular file; give a file")
        chunks, n = [], 0
        while True:
            chunk = os.read(fd, min(1 << 22, limit + 1 - n))
            if not chunk:
                break
            chunks.append(chunk)
            n += len(chunk)
            if n > limit:
                raise HetsimError(f"{path}: larger than the {_size(limit)} hetsim reads as "
                                  f"{what or 'an input file'}")
        return b"".join(chunks)
    except OSError as e:
        raise HetsimError(f"{path}: cannot read ({e.strerror or e})") from None
    finally:
        os.close(fd)


def _size(n: int) -> str:
    return f"{n >> 30} GiB" if n >= 1 << 30 and not n % (1 << 30) else f"{n >> 20} MiB"


def read_json(path: str | os.PathLike, limit: int = MAX_JSON_BYTES, what: str = "JSON") -> Any:
    """A JSON file, parsed; one line naming the file for anything wrong with it. Refused besides
    malformed JSON: NaN and Infinity (Python's extensions, no JSON), a number that overflows to
    infinity (``1e400``), nesting past what the parser recurses through, a duplicate key."""
    path = Path(path)
    text = decode_text(read_input(path, limit, what), str(path), None)
    return parse_json(text, str(path))


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is no JSON number (JSON has no NaN or infinity)")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"the number {_short(text, 40)} overflows a float64 (infinite)")
    return value


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):   # the rare case: find the key given twice
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise ValueError(f"duplicate key {_short(key, 60)!r}")
            seen.add(key)
    return out


def parse_json(text: str, source: str) -> Any:
    """Parse JSON ``text`` strictly (see :func:`read_json`); errors name ``source``."""
    try:
        return json.loads(text, parse_constant=_no_constant, parse_float=_finite_float,
                          object_pairs_hook=_no_duplicates)
    except json.JSONDecodeError as e:
        truncated = " (truncated?)" if e.pos >= len(text.rstrip()) else ""
        raise HetsimError(f"{source}: not valid JSON{truncated}: {e.msg} at line {e.lineno}, "
                          f"column {e.colno}") from None
    except RecursionError:
        raise HetsimError(f"{source}: refused JSON: nested too deeply to read") from None
    except ValueError as e:   # raised by the hooks above (json wraps none of them)
        raise HetsimError(f"{source}: refused JSON: {e}") from None


#: Longest name hetsim turns into a file name (``<name>.measurements.json``, and a temporary
#: ``.<name>.<random>.tmp`` beside it, stay within the 255 bytes a file name may have).
MAX_NAME_BYTES = 200
_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_.+-]*$")


def check_name(name: str, what: str, *, strict: bool = False) -> str:
    """Refuse, before any work, a name that becomes a file name but could land elsewhere or fail
    late: empty, ``.`` or ``..``, with a path separator (``../../x``, ``/abs/x``), a NUL or another
    control character, hidden (a leading dot), or longer than :data:`MAX_NAME_BYTES`. ``strict``:
    also the pattern of platform names (a letter, then letters, digits and ``_.+-``), for a name
    that becomes a platform's. Returns the name."""
    if not isinstance(name, str) or not name:
        raise HetsimError(f"{what}: an empty name; give a name such as host")
    shown = _short(repr(name), 60)
    if any(sep in name for sep in ("/", "\\", os.sep)) or name in (".", ".."):
        raise HetsimError(f"{what} {shown}: a name, not a path (it becomes a file name inside the "
                          "output folder); give a name without '/' or '..'")
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in name):
        raise HetsimError(f"{what} {shown}: contains a control character, which no name has")
    if name.startswith("."):
        raise HetsimError(f"{what} {shown}: starts with a dot (a hidden file); start it with a letter")
    if len(os.fsencode(name)) > MAX_NAME_BYTES:
        raise HetsimError(f"{what} {shown}: {len(os.fsencode(name))} bytes; a name has at most "
                          f"{MAX_NAME_BYTES}")
    if strict and not _NAME.match(name):
        raise HetsimError(f"{what} {shown}: a name starts with a letter, then letters, digits and _.+-")
    return name


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
    _check_regular(p, f"{flag} {text}")
    for parent in p.parents:
        if parent.exists():
            if not parent.is_dir():
                raise HetsimError(f"{flag} {text}: {parent} is a file, not a folder")
            break


def _check_regular(path: Path, shown: str) -> None:
    """Refuse an existing output target that is not a regular file (after symlinks): writing a
    result over ``/dev/null``, a FIFO or a socket would replace it (as root, the system's own)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:   # not there yet (or not reachable: the write says why)
        return
    kind = _file_kind(mode)
    if kind is not None:
        raise HetsimError(f"{shown}: is {kind}, not a regular file; hetsim writes results only to "
                          "regular files (give a file name)")


def check_output_dir(path: str | os.PathLike | None, flag: str) -> None:
    """Refuse, before any work, a folder no file can be written into: empty, a file, or under a
    file. (None: the option was not given; a folder that does not exist yet is made.)"""
    if path is None:
        return
    text = os.fspath(path)
    if str(text) == "":
        raise HetsimError(f"{flag}: an empty folder name; give a folder such as results/run1")
    check_path(str(text), flag)
    p = Path(text)
    if p.exists() and not p.is_dir():
        kind = _file_kind(os.stat(p).st_mode)
        raise HetsimError(f"{flag} {text}: is {kind or 'a file'}; give a folder")
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
        data = _load_fast(text)
        if data is not _FALLBACK:
            return data
        from hetsim.loading import check_load

        check_load(source, len(text), "yaml-bytes")   # the Python reader: ~150 kB/s
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


_FALLBACK = object()
_CParser: Any
try:   # libyaml's parser, in C (PyYAML's own, in Python, reads ~150 kB/s)
    from yaml._yaml import CParser as _CParser
except ImportError:  # pragma: no cover - PyYAML built without libyaml
    _CParser = None
_TREE_TAGS = frozenset(f"tag:yaml.org,2002:{t}" for t in ("null", "bool", "int", "float", "str", "timestamp"))


def _load_fast(text: str) -> Any:
    """The document of ``text`` built straight from libyaml's events, for the documents hetsim's
    files are: one tree of mappings, sequences and plain or quoted scalars. The values are those
    :class:`_Loader` makes (its resolver and scalar constructors, each distinct scalar resolved
    once), with the same refusals (duplicate keys, depth, digits); anything else (an
    anchor or alias, an explicit tag, a merge key, a key that is a collection, several documents,
    a syntax error) returns ``_FALLBACK``, and :class:`_Loader` reads the text with its own
    messages. A workload of 100,000 ops (3 MB) reads ~30x faster."""
    if _CParser is None:
        return _FALLBACK
    E = yaml.events
    helper = _Loader("")
    constructors, resolve = helper.yaml_constructors, helper.resolve
    parser = _CParser(text)
    try:
        get = parser.get_event
        get()                                              # StreamStart
        ev: Any = get()
        if isinstance(ev, E.StreamEndEvent):
            return None                                    # an empty document, as get_single_data
        cache: dict[tuple, tuple[str, Any]] = {}
        stack: list[list] = []   # [container, is_mapping, pending key, seen raw keys]
        root: Any = _FALLBACK
        while True:
            ev = get()
            kind = type(ev)
            if kind is E.ScalarEvent:
                if ev.anchor is not None or ev.tag not in (None, "!"):
                    return _FALLBACK
                key = (ev.value, ev.implicit)
                hit = cache.get(key)
                if hit is None:
                    tag = resolve(yaml.ScalarNode, ev.value, ev.implicit)
                    if tag not in _TREE_TAGS:
                        return _FALLBACK
                    node = yaml.ScalarNode(tag, ev.value, ev.start_mark, ev.end_mark, ev.style)
                    hit = cache[key] = (tag, constructors[tag](helper, node))
                value: Any = hit[1]
                raw: tuple | None = (hit[0], ev.value)
            elif kind is E.MappingStartEvent or kind is E.SequenceStartEvent:
                if ev.anchor is not None or ev.tag not in (None, "!") or (stack and stack[-1][1]
                                                                          and stack[-1][2] is _FALLBACK):
                    return _FALLBACK                       # anchored, tagged, or a collection as a key
                if len(stack) >= MAX_YAML_DEPTH:
                    raise _Refused(None, None, f"nested deeper than {MAX_YAML_DEPTH} levels", ev.start_mark)
                mapping = kind is E.MappingStartEvent
                stack.append([{} if mapping else [], mapping, _FALLBACK, {} if mapping else None])
                continue
            elif kind is E.MappingEndEvent or kind is E.SequenceEndEvent:
                value, raw = stack.pop()[0], None
            elif kind is E.DocumentEndEvent:
                break
            else:                                          # an alias
                return _FALLBACK
            # No node limit here: without aliases the document is no bigger than its bytes (64 MiB at
            # most); what it holds is counted by its loader (a workload's ops, a platform's entries).
            if not stack:
                root = value
                continue
            top = stack[-1]
            if not top[1]:
                top[0].append(value)
            elif top[2] is _FALLBACK:                      # a key
                if raw is None or raw[0] == "tag:yaml.org,2002:merge":
                    return _FALLBACK
                first = top[3].get(raw)
                if first is not None:
                    raise _Refused(None, None, f"duplicate key {_short(raw[1], 60)!r} (first at line "
                                   f"{first.line + 1})", ev.start_mark)
                top[3][raw] = ev.start_mark
                top[2] = value
            else:
                top[0][top[2]] = value
                top[2] = _FALLBACK
        if not isinstance(get(), E.StreamEndEvent):
            return _FALLBACK                               # several documents: the loader says so
        return root
    except _Refused:
        raise
    except yaml.YAMLError:
        return _FALLBACK
    finally:
        parser.dispose()


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
    if path.is_symlink():   # write the file the link names, and keep the link
        path = Path(os.path.realpath(path))
    _check_regular(path, str(path))
    tmp = path.parent / _temp_name(path.name)
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


def _temp_name(name: str) -> str:
    """``.<name>.<random>.tmp``, its name part shortened so that it stays within the 255 bytes of
    a file name (a legal 250-byte output name would otherwise fail once the work is done)."""
    token = secrets.token_hex(6)
    room = 255 - len(f"..{token}.tmp")
    raw = os.fsencode(name)
    if len(raw) > room:
        name = os.fsdecode(raw[:room])
    return f".{name}.{token}.tmp"


_WARNED: set[str] = set()


_QUIET_NOTES: list[bool] = []


@contextmanager
def quiet_notes() -> Iterator[None]:
    """Notes (not warnings) left unsaid inside: a listing that loads every platform says what the
    notes would in its own columns."""
    _QUIET_NOTES.append(True)
    try:
        yield
    finally:
        _QUIET_NOTES.pop()


def note_once(message: str) -> None:
    """Print ``hetsim: note: message`` on stderr, once per process per message."""
    import sys

    if _QUIET_NOTES:
        return
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
