"""hetsim's optional parts: the packages each extra of pyproject.toml brings, and the one line a
command gives when it needs one that is not installed (``hetsim.cli.main`` turns the
ModuleNotFoundError into it, exit 2). The README's two commands (``make demo``, ``make test``)
install every extra."""

from __future__ import annotations

#: Top-level module -> the extra that installs it (pyproject.toml [project.optional-dependencies]).
EXTRAS = {
    "onnx": "onnx",            # ONNX import and export, the generated networks, hetsim profile
    "onnxruntime": "onnx",
    "pymoo": "moo",            # NSGA-II (pipelines, and the hybrid NSGA-II paper)
    "ortools": "ilp",          # CP-SAT: ILP-exact placements, HOPE:LP
    "distributed": "dask",     # sweeps and reproductions on a Dask cluster
    "bokeh": "dask",
    "saga": "saga",            # saga's schedulers as explorers
    "perfetto": "perfetto",    # Perfetto's trace processor on a --trace file
}


def missing_extra(error: ModuleNotFoundError) -> str | None:
    """The one-line message for a missing optional package, or None when the missing module is
    not one an extra brings (a real bug: let it show)."""
    root = (error.name or "").split(".")[0]
    extra = EXTRAS.get(root)
    if extra is None:
        return None
    return (f"this needs the '{root}' package, which hetsim's [{extra}] extra installs: "
            f"pip install 'hetsim[{extra}]' (or 'hetsim[all]')")
