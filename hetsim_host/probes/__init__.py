"""Research instruments of the host calibration: each one measures this machine, or re-scores its
saved runs, and prints the tables docs/fidelity.md quotes. Not part of ``calibrate host`` or
``validate host``; run each as a module:

* ``python -m hetsim_host.probes.fidelity``: repeated quiet ``calibrate host`` + ``validate host``
  runs of the five CNNs (both cost models), and their offline refits, ablations and breakdowns;
* ``python -m hetsim_host.probes.gemv_lead``: the executor's fc (a GEMV) by page size, orientation,
  context and thread count, and the softmax;
* ``python -m hetsim_host.probes.gemm_after_gap``: a GEMM right after a 1-thread kernel of a given
  length, against back to back;
* ``python -m hetsim_host.probes.pool_taps``: the executor's pooling by window taps against covered
  bytes, warm and cold.
"""
