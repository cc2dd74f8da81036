"""Finding and loading workloads: a YAML file by name or path (:data:`search_path`), or a generated
network of an installed plugin (built, imported from ONNX, cached). The file's content becomes a
:class:`~hetsim.workload.model.Workload` through :func:`hetsim.workload.build.workload_from_dict`.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

from hetsim.errors import HetsimError
from hetsim.paths import search_path as _search_path
from hetsim.validation import check_path, read_yaml
from hetsim.workload.build import workload_from_dict
from hetsim.workload.model import Workload


def search_path() -> list[Path]:
    """Directories searched for workload ``<name>.yaml`` files (see :func:`hetsim.paths.search_path`)."""
    return _search_path("workloads")


def list_workloads() -> list[str]:
    """Names of all workloads on the search path, sorted (the zoo's generated networks are
    listed by :data:`hetsim.workload.networks.generated()`)."""
    names: set[str] = set()
    for d in search_path():
        names.update(p.stem for p in d.iterdir() if p.suffix in (".yaml", ".yml"))
    return sorted(names)


def resolve_workload(name_or_path: str | os.PathLike) -> Path:
    """The file a workload name or path refers to (a path ends in .yaml/.yml or has a slash)."""
    text = os.fspath(name_or_path)
    check_path(str(text), "workload")
    if text.endswith((".yaml", ".yml")) or os.sep in text or "/" in text:
        return Path(text)
    for d in search_path():
        for suffix in (".yaml", ".yml"):
            p = d / f"{text}{suffix}"
            if p.is_file():
                return p
    raise HetsimError(f"unknown workload {text!r}; available: "
                      f"{', '.join(list_workloads()) or 'none (check $HETSIM_WORKLOADS)'} "
                      f"(and the generated networks of the installed plugins, '+mnn' for MNN's fusions)")


def load_workload(name_or_path: str | os.PathLike) -> Workload:
    """Load a workload by name (``resnet50``, looked up on :func:`search_path`) or by path.

    Loaded workloads are cached on (resolved path, mtime), so repeated loads are free and return
    the same immutable object; editing the file invalidates the entry. A name no file on the
    search path has may be a network the zoo generates (:func:`generated_workload`).
    """
    try:
        path = resolve_workload(name_or_path)
    except HetsimError:
        text = os.fspath(name_or_path)
        if text.partition("+")[0] in _zoo_names():
            return generated_workload(text)
        raise
    if not path.exists():
        raise HetsimError(f"{path}: no such workload file")
    if not path.is_file():   # a folder, a FIFO, a device: the reader says which, and reads none
        read_yaml(path)
    resolved = path.resolve()
    return _load_file(resolved, resolved.stat().st_mtime_ns)


#: Converter passes a generated network's name may ask for after a ``+``: ``nasnet-large+mnn`` is
#: the zoo's NASNet-Large after MNN's fusions (:func:`hetsim.workload.onnx_fuse.fuse_mnn`), the
#: graph HOPE schedules.
ZOO_PASSES = ("mnn",)


def _zoo_names() -> frozenset[str]:
    from hetsim.workload.networks import generated

    return frozenset(generated())


@lru_cache(maxsize=32)
def generated_workload(name: str) -> Workload:
    """A network of :data:`hetsim.workload.networks.generated()` as a workload: built, imported from
    ONNX (:func:`~hetsim.workload.onnx_import.import_onnx`) and cached; ``<name>+mnn`` after MNN's
    converter fusions. ``load_workload`` falls back to this for names no file has."""
    from hetsim.workload.networks import generated
    from hetsim.workload.onnx_fuse import fuse_mnn
    from hetsim.workload.onnx_import import import_onnx

    base, plus, passes = name.partition("+")
    if base not in generated():
        raise HetsimError(f"unknown generated network {base!r}; allowed: {', '.join(sorted(generated()))}")
    if plus and passes not in ZOO_PASSES:
        raise HetsimError(f"workload {name!r}: unknown pass {passes!r} after '+'; allowed: "
                          f"{', '.join(ZOO_PASSES)}")
    model = generated()[base]()
    if passes == "mnn":
        model = fuse_mnn(model)
    return import_onnx(model, name, source=f"<zoo {name}>").workload


@lru_cache(maxsize=64)
def _load_file(path: Path, _mtime_ns: int) -> Workload:
    shown = _display(path)
    data = read_yaml(shown)
    workload = workload_from_dict(data, str(shown), path=path)
    if workload.name != path.stem:
        # Results and cost caches are keyed by the name: it must say which file it came from.
        raise HetsimError(f"{shown}: name: {workload.name!r} must match the file name "
                          f"{path.stem!r}")
    return workload


def _display(path: Path) -> Path:
    """``path`` relative to the working directory when it lies below it (shorter messages)."""
    try:
        return path.relative_to(Path.cwd())
    except ValueError:
        return path


# -- building ------------------------------------------------------------------------------
