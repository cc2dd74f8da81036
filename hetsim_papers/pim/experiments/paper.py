"""What the PIM partitioning paper states (seed 003: Kim et al., ACM TODAES 29(2), 2024), checked
against the paper's text; where a value is a
derivation rather than the paper's, its comment says so.
"""

from __future__ import annotations

from hetsim.experiment import ClaimClass as CC

PAPER = "pim"

#: Table 3 (§4.5): CG and DCG sizes with three devices, and the profiling counts.
TABLE3 = {
    "bert-small": {"V_c": 222, "E_c": 262, "V_d": 469, "E_d": 686, "DA": 20, "pim_capable": 108,
                   "node_runs": 3, "edge_runs": 1, "traversal_s": 0.04, "dp_s": 0.02},
    "roberta-base": {"V_c": 616, "E_c": 725, "V_d": 1317, "E_d": 1951, "DA": 20, "pim_capable": 308,
                     "node_runs": 3, "edge_runs": 1, "traversal_s": 0.04, "dp_s": 0.07},
    "gpt2": {"V_c": 1934, "E_c": 2424, "V_d": 2593, "E_d": 1723, "DA": 24, "pim_capable": 245,
             "node_runs": 3, "edge_runs": 1, "traversal_s": 0.07, "dp_s": 0.21},
}
#: §4.5: "only four DA edges were left to discover for all three models" after the node runs.
DA_LEFT_AFTER_NODE_RUNS = 4
#: Table 1 (§3.2.1): two devices (CPU and PIM; hetsim: CPU_S and PIM), dashed edges and DA edges.
TABLE1 = {"bert-small": {"E_d": 221, "DA": 8}, "roberta-base": {"E_d": 628, "DA": 8},
          "gpt2": {"E_d": 527, "DA": 7}}
#: §4.4: execution paths of the whole graphs, 3^x.
LOG3_PATHS = {"bert-small": 127.5, "roberta-base": 361.6, "gpt2": 351.6}
#: The sequence length of Tables 1 and 3's counts (the DA counts depend on p: docs/papers/pim.md)
#: and of Table 3's times, Figs. 10-12 (§4.3, conclusion).
COUNTS_P = 8
MAPS_P = 16

#: Fig. 9 (§4.3, conclusion): OPT's speedup over each scheme, the range over 3 models x p = 8..64.
FIG9_RANGES = {"(CPU_P,PIM,CPU_S)": (1.1, 2.1), "(PIM,CPU_P,CPU_S)": (1.1, 3.0), "DUET(x=50%)": (1.09, 1.23)}
#: Tolerance of a speedup-range endpoint: ±15 % of the speedup (hetsim's tolerance for a simulated
#: against a measured speedup, as Pipe-search's throughputs: the paper rounds to 2 digits and
#: measures on an emulated PIM). For DUET, whose speedups lie near 1, the gain (speedup - 1) is
#: compared instead, within ±5 percentage points: ±15 % of 1.09 would accept no gain at all.
FIG9_REL_TOL = 0.15
FIG9_DUET_GAIN_TOL = 0.05

#: Fig. 11 (§4.3), p = 16: OPT against (PIM, CPU_P, CPU_S), (compute, transfer) change; GPT-2's
#: compute time is "similar" (read as within ±10 %).
FIG11 = {"bert-small": (-0.54, -0.27), "roberta-base": (-0.34, -0.20), "gpt2": (None, -0.64)}
FIG11_TOL = 0.05               # ±5 percentage points on a reduction
FIG11_SIMILAR = 0.10

#: Fig. 13 (§4.4): windows of 15 consecutive nodes, every path enumerated.
FIG13_WINDOW = 15


# -- claim classes ------------------------------------------------------------------------------------
#: The class of each claim (hetsim.experiment's claim classes: what an agreement is evidence of).
PREDICTION, FIT_INPUT, FIT_DEPENDENT = CC.PREDICTION, CC.FIT_INPUT, CC.FIT_DEPENDENT
STRUCTURAL, VECTOR = CC.STRUCTURAL, CC.VECTOR


def claim(ctx, method: str, *args, kind, **kwargs):
    """``ctx.<method>(*args, **kwargs)`` with the claim's class ``kind``."""
    return getattr(ctx, method)(*args, kind=kind, **kwargs)
