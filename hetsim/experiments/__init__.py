"""Experiment drivers: one module per paper, one function per figure or table.

Run them with ``hetsim reproduce`` (see :mod:`hetsim.experiment`).
"""
