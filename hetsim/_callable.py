"""Two names of hetsim's API, ``evaluate`` and ``explore``, are also the names of the modules
that define them. Importing such a module binds the module on the package (``import
hetsim.explore`` makes ``hetsim.explore`` the module), which would shadow the function of the same
name whatever the import order. :func:`make_callable` lets the module be called as its function,
so ``hetsim.explore(problem, explorer, seed=0)`` and ``hetsim.explore.PipelineProblem`` both work."""

from __future__ import annotations

import inspect
import sys
import types
from collections.abc import Callable


def make_callable(module_name: str, func: Callable) -> None:
    """Calling module ``module_name`` calls ``func`` (with its signature and docstring in help)."""

    class _CallableModule(types.ModuleType):
        def __call__(self, *args, **kwargs):
            return func(*args, **kwargs)

    _CallableModule.__call__.__doc__ = func.__doc__
    module = sys.modules[module_name]
    module.__class__ = _CallableModule
    module.__signature__ = inspect.signature(func)   # type: ignore[attr-defined]   # for help()
