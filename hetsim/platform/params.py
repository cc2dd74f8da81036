"""The base of a platform YAML's cost-model parameter blocks, and what a block's module may use.

A core type or accelerator holds hardware facts at the top and each cost model's fitted parameters
in its own block (``roofline:``, ``gemm2:``; docs/platforms.md). A block is a subclass of
:class:`CostParams`. hetsim's own blocks are fields of :class:`~hetsim.platform.schema.CoreType` and
:class:`~hetsim.platform.schema.Accelerator`; a plugin adds its blocks through its
``parameter_blocks`` (:mod:`hetsim.plugins`), and the schema gives them the same place: a key of the
YAML, validated by the block's model, its defaults when left out.

A plugin's block module imports only this module, :mod:`hetsim.bounds` and pydantic: the platform
schema imports it while it is being built.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from hetsim.errors import HetsimError
from hetsim.workload.ops import OpKind

#: Op kinds (hetsim's one vocabulary, :class:`hetsim.workload.ops.OpKind`). ``kinds`` lists in core
#: types and accelerators restrict what an EP may run; a mapping that places an op elsewhere is
#: rejected.
OP_KINDS = tuple(k.value for k in OpKind)


class Strict(BaseModel):
    """Base of every platform model: unknown keys are errors, values are strict and frozen."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, strict=True)


class CostParams(Strict):
    """Base of a cost model's parameter block. ``readers`` names the cost models that read it;
    ``v1_fields`` the keys schema 1 kept at the top of a core type or accelerator, which loading a
    version 1 file moves into this block."""

    readers: ClassVar[tuple[str, ...]] = ()
    v1_fields: ClassVar[tuple[str, ...]] = ()


#: ``kind_overhead_us`` of the roofline and gemm2 blocks: the same field in both.
KIND_OVERHEAD_US: Any = Field(
    default_factory=dict, description="Fixed cost per op of a kind on top of op_overhead_us, us: one "
    "value or a list whose entry n-1 holds on an EP of n cores. For kernels whose time in a running "
    "network is a few cold calls rather than bytes (the softmax over a classifier's outputs, "
    "docs/validation.md). Default: none.")


def check_kinds(kinds: Sequence[str] | None) -> None:
    """Every name of ``kinds`` is an op kind (a ValueError naming the first that is not)."""
    for k in kinds or ():
        if k not in OP_KINDS:
            raise ValueError(f"unknown op kind {k!r}; allowed: {', '.join(OP_KINDS)}")


def by_cores(value: float | Sequence[float], n: int, scale_past_end: bool) -> float:
    """The value of a per-core-count parameter on ``n`` cores.

    A list holds entry n-1 for n cores (as measured); past its end the last entry holds
    (``scale_past_end=False``: efficiencies, fixed costs) or scales with the cores, last x n / len
    (``True``: rates, of which n cores do n times as much). A single value is a one-entry list: the
    value itself, or n x it::

        by_cores([1.0, 0.9], 4, scale_past_end=False)   # 0.9
        by_cores([5.0, 9.0], 4, scale_past_end=True)    # 18.0
        by_cores(2.0, 3, scale_past_end=True)           # 6.0
    """
    if n < 1:
        raise HetsimError(f"core count {n}: must be at least 1")
    if isinstance(value, int | float):
        return value * n if scale_past_end else value
    last = len(value)
    if not last:
        raise HetsimError("a per-core-count list needs at least one entry")
    if n <= last:
        return value[n - 1]
    return value[-1] * n / last if scale_past_end else value[-1]


def cost_blocks(owner: type[BaseModel]) -> dict[str, type[CostParams]]:
    """The cost-model parameter blocks of ``owner`` (CoreType or Accelerator): YAML key -> model."""
    out = {}
    for key, info in owner.model_fields.items():
        if isinstance(info.annotation, type) and issubclass(info.annotation, CostParams):
            out[key] = info.annotation
    return out


def misplaced_parameter(owner: type[BaseModel], where: str, data: Any) -> None:
    """A block's parameter written at the top (a schema 1 habit, an old --set path) is an error
    that names the block it belongs in (each of them, when several blocks have a field of that name)."""
    if not isinstance(data, dict):
        return
    blocks = cost_blocks(owner)
    for key in data:
        if key in owner.model_fields:
            continue
        homes = [b for b, model in blocks.items() if key in model.model_fields]
        if homes:
            name = data.get("name", "<name>")
            paths = " or ".join(f"{where}.{name}.{b}.{key}" for b in homes)
            models = " and ".join(homes)
            raise ValueError(f"{key} is a parameter of the {models} cost model{'s' if len(homes) > 1 else ''}: "
                             f"since schema 2 it goes in the {' or '.join(homes)} block ({paths})")


def with_blocks(model: type[BaseModel], section: str) -> type[BaseModel]:
    """``model`` (CoreType or Accelerator) with a field for every plugin block of ``section``
    (:func:`hetsim.plugins.parameter_blocks`): a subclass of the same name, so that a block is
    validated, documented in the JSON Schema and dumped like hetsim's own."""
    from pydantic import create_model

    from hetsim.plugins import parameter_blocks, resolve

    fields: dict[str, Any] = {}
    for key, ref in parameter_blocks(section).items():
        if key in model.model_fields:
            raise HetsimError(f"plugin parameter block {section}.{key} ({ref}) takes the name of a field "
                              f"of {model.__name__}")
        try:
            block = resolve(ref)
        except ImportError as e:
            raise HetsimError(f"plugin parameter block {section}.{key}: {ref} failed to import ({e}); a "
                              "block's module may import only hetsim.platform.params, hetsim.bounds "
                              "and pydantic") from None
        if not (isinstance(block, type) and issubclass(block, CostParams)):
            raise HetsimError(f"plugin parameter block {section}.{key}: {ref} is not a subclass of "
                              "hetsim.platform.params.CostParams")
        doc = (block.__doc__ or "").strip().split("\n\n")[0].replace("\n", " ")
        fields[key] = (block, Field(default_factory=block, description=doc))
    if not fields:
        return model
    return create_model(model.__name__, __base__=model, __module__=model.__module__, **fields)
