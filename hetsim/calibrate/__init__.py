"""Calibration: fitting a platform's cost-model parameters to measurements.

Two ways in, one optimizer (:func:`fit_overrides`, scipy least squares on log ratios):

* :func:`fit_platform`: stated throughputs of named configurations (a paper's tables), each an
  :class:`Observation`; what the reproductions run.
* :func:`calibrate_platform`: a board's measured times (a tidy table of per-layer, per-op,
  whole-network and pipeline rows, :mod:`hetsim.calibrate.table`; ONNX Runtime profiles; ARM
  Compute Library logs), with switchable mechanisms, a residual report and cross-validation over
  networks (``hetsim calibrate platform``, docs/calibrate.md).
"""

from hetsim.calibrate.fit import Evaluator, Fit, Observation, fit_overrides, fit_platform

__all__ = ["Evaluator", "Fit", "Observation", "fit_overrides", "fit_platform"]
