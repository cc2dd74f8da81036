"""Key paths of validation errors as ``--set`` writes them, and "did you mean" for unknown keys.

pydantic locates an error by list index (``core_types.0.dvfs.1.freq_MHz``); ``--set`` addresses a
list entry by its name (``core_types.cortex-a73.dvfs.max.freq_MHz``), so a path copied from an error
works on the command line::

    >>> named_loc(("core_types", 0, "dvfs", 1), {"core_types": [{"name": "a73", "dvfs": [{"name": "hi"}, {"name": "lo"}]}]})
    'core_types.a73.dvfs.lo'

An unknown key gets the nearest allowed key of the model at its place (``bandwith_GBps``: did you
mean ``bandwidth_GBps``?), else the list of allowed keys.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel


def entry_name(entry: Any) -> str | None:
    """How ``--set`` addresses a list entry: its ``name`` (an accelerator's precision: its ``dtype``);
    None when it has none a dotted path can hold (no name, or one with a dot or a space)."""
    if isinstance(entry, dict):
        value = entry.get("name", entry.get("dtype"))
        if isinstance(value, str) and value and not any(c in value for c in ". \t\n"):
            return value
    return None


def named_loc(loc: Sequence[Any], data: Any) -> str:
    """A pydantic ``loc`` as a dotted path, list indices replaced by the entries' names where they
    have one (plain lists, e.g. ``parallel_efficiency``, keep their 0-based index)."""
    parts: list[str] = []
    node = data
    for p in loc:
        if isinstance(p, int) and isinstance(node, list) and 0 <= p < len(node):
            name = entry_name(node[p])
            parts.append(name if name is not None else str(p))
            node = node[p]
        elif isinstance(node, dict) and p in node:
            parts.append(str(p))
            node = node[p]
        else:
            parts.append(str(p))
            node = None
    return ".".join(parts)


def _model_of(annotation: Any) -> Any:
    """The pydantic model inside an annotation (``X | None``, ``list[X]``, ``dict[str, X]``), if any."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()) or ():
        found = _model_of(arg)
        if found is not None:
            return found
    return None


def allowed_keys(model: type[BaseModel], loc: Sequence[Any]) -> list[str]:
    """The keys ``model`` accepts at ``loc`` (list indices, dict keys and union tags skipped)."""
    current: Any = model
    for part in loc:
        if not (isinstance(current, type) and issubclass(current, BaseModel)):
            return []
        fields = {(f.alias or n): f for n, f in current.model_fields.items()}
        if isinstance(part, str) and part in fields:
            current = _model_of(fields[part].annotation)
    if isinstance(current, type) and issubclass(current, BaseModel):
        return [(f.alias or n) for n, f in current.model_fields.items()]
    return []


def nearest(key: str, allowed: Sequence[str]) -> str | None:
    """The allowed key a typo of ``key`` most likely meant (None: none is close)."""
    near = difflib.get_close_matches(key, list(allowed), n=1, cutoff=0.6)
    return near[0] if near else None


def unknown_key_hint(key: str, allowed: Sequence[str]) -> str:
    """``" (did you mean 'x'?)"`` for a near miss, else ``"; allowed: a, b, ..."``."""
    near = nearest(key, allowed)
    if near is not None:
        return f" (did you mean {near!r}?)"
    return f"; allowed: {', '.join(allowed)}" if allowed else ""


class Describe:
    """For :func:`hetsim.validation.error_lines`: each error's path with named list entries and,
    for an unknown key, what it was most likely meant to be."""

    def __init__(self, model: type[BaseModel], data: Any):
        self.model, self.data = model, data

    def __call__(self, err: dict) -> tuple[str, str]:
        loc = err["loc"]
        where = named_loc(loc, self.data)
        if err["type"] == "extra_forbidden" and loc:
            return where, "unknown key" + unknown_key_hint(str(loc[-1]), allowed_keys(self.model, loc[:-1]))
        return where, ""
