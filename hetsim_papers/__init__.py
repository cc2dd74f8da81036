"""The papers hetsim reproduces, one folder each, each a plugin of hetsim (:mod:`hetsim.plugins`).

A folder holds everything of its paper: the algorithms (explorers), its cost model and the
parameter block it reads from a platform YAML, the networks it generates, its platforms, the
experiments that regenerate its figures and tables (``hetsim reproduce PAPER``), the claims hetsim
is known to fail (``known_disagreements.yaml``), its notebook and its tests. Each registers through
the ``hetsim.plugins`` entry points of pyproject.toml, as a third-party package would; the core
(:mod:`hetsim`) imports none of them.
"""
