"""Finding, loading, overriding and validating platform YAML files."""

from __future__ import annotations

import copy
import json
import os
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from hetsim.errors import HetsimError
from hetsim.paths import search_path
from hetsim.platform.schema import Platform
from hetsim.validation import error_lines, one_line, read_yaml


def list_platforms() -> list[str]:
    names: set[str] = set()
    for d in search_path("platforms"):
        names.update(p.stem for p in d.glob("*.yaml"))
    return sorted(names)


def resolve_platform(name_or_path: str | os.PathLike) -> Path:
    text = str(name_or_path)
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
    for ov in overrides or ():
        apply_override(data, ov, source=str(path))
    if dvfs:
        apply_dvfs(data, dvfs, source=str(path))
    # Name the overrides in errors: the file itself may be fine.
    source = f"{path} (with --set {' '.join(overrides)})" if overrides else str(path)
    return platform_from_dict(data, source)


@lru_cache(maxsize=64)
def _read(path: Path, _mtime: float) -> dict:
    return read_yaml(path)


def platform_from_dict(data: dict, source: str = "<platform>") -> Platform:
    try:
        return Platform.model_validate(data)
    except ValidationError as e:
        raise one_line(source, e) from None


def validate_file(path: str | os.PathLike) -> list[str]:
    """Every problem in a platform file, one line each with its field path ([] when valid)."""
    p = Path(path)
    try:
        data = read_yaml(p)
    except HetsimError as e:
        return [str(e)]
    try:
        Platform.model_validate(data)
    except ValidationError as e:
        return error_lines(str(p), e)
    return []


def apply_override(data: dict, text: str, source: str = "<platform>") -> None:
    """Set one value in the raw platform dict: ``clusters.big.cores=3``."""
    key, eq, raw = text.partition("=")
    if not eq or not key:
        raise HetsimError(f"--set {text!r}: expected key.path=value, e.g. links.nop.latency_ns=1e6")
    value = yaml.safe_load(raw)
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
            match = [x for x in node if isinstance(x, dict) and x.get("name") == part]
            if not match:
                names = [x.get("name") for x in node if isinstance(x, dict)]
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
    if "=" in setting:
        pairs = dict(p.split("=", 1) for p in setting.split(",") if p)
    elif setting in presets:
        pairs = presets[setting]
    else:
        raise HetsimError(f"--dvfs {setting!r}: {source} has no such preset; "
                          f"presets: {', '.join(presets) or 'none'} (or give cluster=level,...)")
    clusters = {str(c.get("name")): c for c in data.get("clusters", []) if isinstance(c, dict)}
    for cname, level in pairs.items():
        if cname not in clusters:
            raise HetsimError(f"--dvfs {setting!r}: no cluster {cname!r}; clusters: {', '.join(clusters)}")
        clusters[cname]["dvfs"] = level


def json_schema() -> str:
    """The JSON Schema of platform files, for editors (``hetsim platforms schema``)."""
    schema = Platform.model_json_schema(by_alias=True)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "hetsim platform"
    return json.dumps(schema, indent=2, sort_keys=True)
