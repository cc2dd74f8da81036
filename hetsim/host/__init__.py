"""Grounding hetsim in this machine: micro-benchmarks and a fitted platform (``hetsim calibrate
host``), and real pipelines of numpy processes compared with the simulator (``hetsim validate
host``). See docs/validation.md."""
