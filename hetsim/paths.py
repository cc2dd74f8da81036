"""Where named platforms and workloads are looked up."""

from __future__ import annotations

import os
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def search_path(kind: str) -> list[Path]:
    """Directories searched for ``<name>.yaml`` of ``kind`` ('platforms', 'workloads' or 'sweeps'):
    each entry of ``$HETSIM_PLATFORMS`` / ``$HETSIM_WORKLOADS`` / ``$HETSIM_SWEEPS``
    (``os.pathsep``-separated), the repository's ``<kind>/`` (source checkouts and editable
    installs), ``hetsim/_data/<kind>`` (the copy packaged in a wheel), then the plugins' folders of
    that kind (:mod:`hetsim.plugins`). A file elsewhere is given by its path."""
    from hetsim.plugins import folders

    dirs = [Path(p) for p in os.environ.get(f"HETSIM_{kind.upper()}", "").split(os.pathsep) if p]
    dirs += [_PACKAGE.parent / kind, _PACKAGE / "_data" / kind, *folders(kind)]
    seen: set[Path] = set()
    out = []
    for d in dirs:
        r = d.resolve()
        if r not in seen and r.is_dir():
            seen.add(r)
            out.append(r)
    return out
