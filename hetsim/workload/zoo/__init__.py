"""Networks hetsim generates by code, as ONNX models (see :mod:`hetsim.workload.zoo.onnx_graph`).

Each module builds the networks of one paper; :data:`GENERATORS` maps a workload name to a
function that returns its ``onnx.ModelProto``.
"""

from __future__ import annotations

from collections.abc import Callable

import onnx

#: Workload name -> builder of its ONNX model. Modules of this package add their networks.
GENERATORS: dict[str, Callable[[], onnx.ModelProto]] = {}


def register(name: str):
    """Register the decorated zero-argument builder as the generated network ``name``."""
    def wrap(fn: Callable[[], onnx.ModelProto]) -> Callable[[], onnx.ModelProto]:
        if name in GENERATORS:
            raise ValueError(f"generated network {name!r} registered twice")
        GENERATORS[name] = fn
        return fn
    return wrap


# Networks by paper (imported last: each module registers its builders with `register`).
# seed 002: Inception, NASNet, SqueezeNet, LSTM; seed 004: AlexNet, VGG-16, DenseNet-121.
from hetsim.workload.zoo import edge, hope  # noqa: E402,F401
