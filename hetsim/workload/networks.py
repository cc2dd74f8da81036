"""Networks that code generates, as ONNX models: a plugin lists them in a :class:`Networks` table
(``Plugin(networks="module:NETWORKS")``) and ``load_workload(name)`` imports one by name.

    NETWORKS = Networks()

    @NETWORKS.register("tiny-cnn")
    def tiny_cnn() -> onnx.ModelProto:
        ...
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class Networks(dict[str, Callable[[], Any]]):
    """Name -> zero-argument builder of an ``onnx.ModelProto``; :meth:`register` adds one."""

    def register(self, name: str):
        """Register the decorated builder as the generated network ``name``."""
        def wrap(fn: Callable[[], Any]) -> Callable[[], Any]:
            if name in self:
                raise ValueError(f"generated network {name!r} registered twice")
            self[name] = fn
            return fn
        return wrap


def generated() -> dict[str, Callable[[], Any]]:
    """Every generated network of the installed plugins, ``name -> builder``."""
    from hetsim.plugins import networks

    return networks()
