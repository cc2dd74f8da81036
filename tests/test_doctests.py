"""Every ``>>>`` example in hetsim's docstrings runs, with hetsim's public API in scope
(``from hetsim import *``): an example that drifts from the code fails here. Illustrations that
need files or minutes of work are plain code blocks instead."""

from __future__ import annotations

import doctest
import importlib
import importlib.util
import pkgutil

import pytest

import hetsim


def _modules_with_examples() -> list[str]:
    names = []
    for info in pkgutil.walk_packages(hetsim.__path__, "hetsim."):
        spec = importlib.util.find_spec(info.name)
        if spec is None or spec.origin is None or not spec.origin.endswith(".py"):
            continue
        with open(spec.origin, encoding="utf-8") as f:
            if ">>> " in f.read():
                names.append(info.name)
    return sorted(names)


@pytest.mark.parametrize("name", _modules_with_examples())
def test_docstring_examples_run(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)   # an example that writes a file writes it here
    module = importlib.import_module(name)
    api = {n: getattr(hetsim, n) for n in hetsim.__all__}
    result = doctest.testmod(module, extraglobs=api, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE,
                             verbose=False, report=True)
    assert result.attempted > 0
    assert result.failed == 0, f"{name}: {result.failed} of {result.attempted} examples fail"
