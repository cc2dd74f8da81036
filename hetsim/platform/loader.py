"""Finding, loading, overriding and validating platform YAML files."""

from __future__ import annotations

import copy
import json
import os
from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from hetsim.errors import HetsimError
from hetsim.paths import search_path
from hetsim.platform.plausibility import plausibility_warnings
from hetsim.platform.schema import SCHEMA_VERSION, Platform
from hetsim.validation import check_path, error_lines, load_yaml, one_line, read_yaml, warn_once

#: The longest ``--set`` key (a path of field names; the deepest real one is ~60 characters).
MAX_KEY_CHARS = 1000


def _short(text: str, n: int) -> str:
    return text if len(text) <= n else text[:n] + "..."


def list_platforms() -> list[str]:
    names: set[str] = set()
    for d in search_path("platforms"):
        names.update(p.stem for p in d.glob("*.yaml"))
    return sorted(names)


def resolve_platform(name_or_path: str | os.PathLike) -> Path:
    text = str(name_or_path)
    check_path(text, "platform")
    if text.endswith((".yaml", ".yml", ".json")) or os.sep in text:
        return Path(text)
    for d in search_path("platforms"):
        p = d / f"{text}.yaml"
        if p.is_file():
            return p
    raise HetsimError(f"unknown platform {text!r}; available: {', '.join(list_platforms()) or 'none'}")


def load_platform(name_or_path: str | os.PathLike, overrides: list[str] | None = None,
                  dvfs: str | None = None) -> Platform:
    """Load and validate a platform by name (``hikey970``) or path.

    ``overrides`` are ``key.path=value`` strings applied before validation, list entries addressed
    by their ``name`` (``links.nop.latency_ns=1e6``). ``dvfs`` names a preset of ``dvfs_presets``
    (or ``cluster=level,cluster=level``) that becomes the clusters' initial levels.
    """
    path = resolve_platform(name_or_path)
    data = copy.deepcopy(_read(path, path.stat().st_mtime if path.exists() else 0.0))
    migrate(data)  # before the overrides: they address version 2's paths
    for ov in overrides or ():
        apply_override(data, ov, source=str(path))
    if dvfs is not None:   # --dvfs '' is a mistake, not "no preset"
        apply_dvfs(data, dvfs, source=str(path))
    # Name the overrides in errors: the file itself may be fine (shortened: one line stays short).
    source = f"{path} (with --set {_short(' '.join(overrides), 200)})" if overrides else str(path)
    platform = platform_from_dict(data, source)
    for line in plausibility_warnings(platform):
        warn_once(f"{source}: {line}")
    return platform


@lru_cache(maxsize=64)
def _read(path: Path, _mtime: float) -> dict:
    return read_yaml(path)


def platform_from_dict(data: dict, source: str = "<platform>") -> Platform:
    """Validate a platform dict (a version 1 dict is migrated first, on a copy); its entries are
    counted before they are validated (:func:`hetsim.loading.check_load`)."""
    from hetsim.loading import check_load

    check_load(source, _entries(data), "entries")
    if isinstance(data, dict) and _is_v1(data):
        data = copy.deepcopy(data)
        migrate(data)
    try:
        return Platform.model_validate(data)
    except ValidationError as e:
        raise one_line(source, e) from None


def _entries(data: Any) -> int:
    """The list entries of a platform dict, one level into each (DVFS levels, precisions, a link's
    ends): what validating and checking it grows with."""
    if not isinstance(data, dict):
        return 0
    n = 0
    for value in data.values():
        if isinstance(value, list | dict):
            n += len(value)
            for item in value if isinstance(value, list) else value.values():
                if isinstance(item, dict):
                    n += sum(len(v) for v in item.values() if isinstance(v, list | dict))
    return n


def v1_moves() -> dict[str, dict[str, tuple[str, ...]]]:
    """Schema 1 kept every cost model's parameters at the top of a core type or accelerator; schema
    2 moves them into one block per cost model: section -> block -> the fields it took from the top
    (each block's ``v1_fields``)."""
    from hetsim.platform.params import cost_blocks
    from hetsim.platform.schema import Accelerator, CoreType

    return {section: {key: block.v1_fields for key, block in cost_blocks(model).items() if block.v1_fields}
            for section, model in (("core_types", CoreType), ("accelerators", Accelerator))}


def migrate(data: dict) -> str | None:
    """Bring a platform dict of an older schema version to the current one, in place.

    Version 1 -> 2 moves each cost model's parameters into its block (:func:`v1_moves`). Returns a
    one-line note of what was done (None for a current file). Malformed parts are left for the
    validation to report; a field that its block already sets stays where it is (and is reported).
    """
    if not _is_v1(data):
        return None
    moved = 0
    into: set[str] = set()   # the blocks that received a field (named in the note)
    moves = v1_moves()
    for section, blocks in moves.items():
        entries = data.get(section)
        for entry in entries if isinstance(entries, list) else ():
            if not isinstance(entry, dict):
                continue
            for block, fields in blocks.items():
                present = [f for f in fields if f in entry]
                if not present:
                    continue
                target = entry.setdefault(block, {})
                if not isinstance(target, dict):
                    continue
                for f in present:
                    if f not in target:
                        target[f] = entry.pop(f)
                        moved += 1
                        into.add(block)
    data["schema"] = SCHEMA_VERSION
    return (f"schema 1, migrated to {SCHEMA_VERSION} on load: {moved} cost-model parameters moved into "
            f"their blocks ({', '.join(sorted(into)) or 'none'})")


def _is_v1(data: dict) -> bool:
    """``schema: 1`` (the integer: ``true`` equals 1 in Python but is no version)."""
    return type(data.get("schema")) is int and data["schema"] == 1


def validate_file(path: str | os.PathLike, notes: list[str] | None = None,
                  warnings: list[str] | None = None) -> list[str]:
    """Every problem in a platform file, one line each with its field path ([] when valid).
    ``notes``, when given, receives a line for each thing done to the file on load (a migration);
    ``warnings`` a line for each implausible value (:mod:`hetsim.platform.plausibility`)."""
    p = Path(path)
    try:
        data = read_yaml(p)
    except HetsimError as e:
        return [str(e)]
    note = migrate(data)
    if note and notes is not None:
        notes.append(note)
    try:
        platform = Platform.model_validate(data)
    except ValidationError as e:
        return error_lines(str(p), e)
    if warnings is not None:
        warnings.extend(f"{p}: {line}" for line in plausibility_warnings(platform))
    return []


def split_override(text: str) -> tuple[str, str]:
    """``key.path=value`` as (key path, the value's YAML text)."""
    key, eq, raw = text.partition("=")
    if not eq or not key:
        raise HetsimError(f"--set {_short(text, 80)!r}: expected key.path=value, e.g. links.nop.latency_ns=1e6")
    if len(key) > MAX_KEY_CHARS:   # no platform field is this deep: a mistake, said in one short line
        raise HetsimError(f"--set {_short(key, 60)!r}: a key of {len(key):,} characters; a key is a path "
                          f"of field names (at most {MAX_KEY_CHARS})")
    return key, raw


def apply_override(data: dict, text: str, source: str = "<platform>") -> None:
    """Set one value in the raw platform dict: ``clusters.big.cores=3``."""
    key, raw = split_override(text)
    value = load_yaml(raw, f"--set {key}")
    parts = key.split(".")
    node: Any = data
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        where = ".".join(parts[: i + 1])
        if isinstance(node, list) and last and part.isdigit() and not any(isinstance(x, dict) for x in node):
            # A list of plain values (parallel_efficiency) is addressed by its 0-based index.
            if int(part) >= len(node):
                raise HetsimError(f"--set {key}: index {part} is past the end of {'.'.join(parts[:i])} "
                                  f"({len(node)} entries: {node}); set the whole list instead")
            node[int(part)] = value
        elif isinstance(node, list):
            # Entries are addressed by their name (an accelerator's precisions by their dtype).
            match = [x for x in node if isinstance(x, dict) and x.get("name", x.get("dtype")) == part]
            if not match:
                names = [x.get("name", x.get("dtype")) for x in node if isinstance(x, dict)]
                raise HetsimError(f"--set {key}: {source} has no entry named {part!r} at {where}; have {names}")
            if last:
                raise HetsimError(f"--set {key}: cannot replace a whole list entry; set one of its fields")
            node = match[0]
        elif isinstance(node, dict):
            if last:
                node[part] = value
            else:
                if part not in node:
                    node[part] = {}
                node = node[part]
        else:
            raise HetsimError(f"--set {key}: {'.'.join(parts[:i])} is a value, not a section")


def apply_dvfs(data: dict, setting: str, source: str = "<platform>") -> None:
    presets = data.get("dvfs_presets") or {}
    if not setting.strip(" ,"):
        raise HetsimError(f"--dvfs {setting!r}: an empty setting; give a preset "
                          f"({', '.join(presets) or 'none in ' + source}) or cluster=level,...")
    if "=" in setting:
        items = [p for p in setting.split(",") if p]
        bad = [p for p in items if "=" not in p]
        if bad:
            raise HetsimError(f"--dvfs {_short(setting, 80)!r}: {_short(bad[0], 40)!r} is not cluster=level")
        pairs = dict(p.split("=", 1) for p in items)
    elif setting in presets:
        pairs = presets[setting]
    else:
        raise HetsimError(f"--dvfs {setting!r}: {source} has no such preset; "
                          f"presets: {', '.join(presets) or 'none'} (or give cluster=level,...)")
    clusters = {str(c.get("name")): c for c in data.get("clusters", []) if isinstance(c, dict)}
    # An accelerator with DVFS levels is set like a cluster (its default_dvfs becomes the level).
    accels = {str(a.get("name")): a for a in data.get("accelerators", []) if isinstance(a, dict) and a.get("dvfs")}
    for cname, level in pairs.items():
        if cname in accels:
            accels[cname]["default_dvfs"] = level
            continue
        if cname not in clusters:
            raise HetsimError(f"--dvfs {setting!r}: no cluster {cname!r}; clusters: {', '.join(clusters)}"
                              + (f"; accelerators with DVFS levels: {', '.join(accels)}" if accels else ""))
        clusters[cname]["dvfs"] = level


def json_schema() -> str:
    """The JSON Schema of platform files, for editors (``hetsim platforms schema``)."""
    schema = Platform.model_json_schema(by_alias=True)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "hetsim platform"
    return json.dumps(schema, indent=2, sort_keys=True)
