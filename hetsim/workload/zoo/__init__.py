"""Networks hetsim generates by code, as ONNX models (see :mod:`hetsim.workload.zoo.onnx_graph`).

Each module builds the networks of one paper; :data:`GENERATORS` maps a workload name to a
function that returns its ``onnx.ModelProto``.
"""

from __future__ import annotations

import importlib
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


def _load(module: str) -> None:
    """Import a module of generated networks (it registers them); a failure is re-raised with
    the module's name, never swallowed, so that a missing network cannot go unnoticed."""
    try:
        importlib.import_module(f"{__name__}.{module}")
    except Exception as exc:
        raise ImportError(f"{__name__}.{module} failed to import ({type(exc).__name__}: {exc}); "
                          "its generated networks are not registered") from exc


# Last, because these modules use ``register`` above.
_load("edge")      # seed 004: AlexNet, VGG-16, DenseNet-121
_load("hope")      # seed 002: Inception, NASNet, SqueezeNet, LSTM
_load("transformers")  # seed 003: BERT-small, RoBERTa-base, GPT-2 small
