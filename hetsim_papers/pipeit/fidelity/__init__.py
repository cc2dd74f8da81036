"""Fidelity harnesses of Pipe-it's ground truth (docs/fidelity.md): ``boards`` (what the refitted
roofline and gemm2 ground truths say per layer, on Table VII, under DVFS and on the RK3399) and
``scorecard`` (the reproduction under each ground truth, ablation and assumed constant). Research
instruments, not part of ``hetsim reproduce``: ``python -m hetsim_papers.pipeit.fidelity.boards``."""
