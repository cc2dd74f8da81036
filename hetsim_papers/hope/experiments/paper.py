"""What HOPE (seed 002) states, as the reproduction compares it, and the tolerances fixed before
the first run. Source: the paper's text; section numbers (§) are HOPE's own."""

from __future__ import annotations

# -- the models (§7), in the paper's order -------------------------------------------------------------
#: HOPE's name -> hetsim's workload (the zoo's graph after MNN's fusions, docs/papers/hope.md).
MODELS = {"IN-V3": "inception-v3+mnn", "IN-V4": "inception-v4+mnn", "PN-M": "pnasnet-mobile+mnn",
          "PN-L": "pnasnet-large+mnn", "NAS-L": "nasnet-large+mnn", "SQZ": "squeezenet-hope+mnn",
          "LSTM": "lstm-deepspeech+mnn"}
#: The quick versions' models: the four smallest graphs (Fig. 4: every phone, every version), and
#: the three whose schedules take least for the figures that run many settings (Figs. 5-6, ablations).
QUICK_MODELS = ("IN-V3", "PN-M", "SQZ", "LSTM")
QUICK_FEW = ("IN-V3", "SQZ", "LSTM")
#: Operators: "ranging from 40 to 1049"; NASNet-Large 1049 operators, 39 distinct tensor shapes (§4.1).
OPS_MIN, OPS_NAS_L, SHAPES_NAS_L = 40, 1049, 39

# -- the phones (§6) ------------------------------------------------------------------------------------
#: platform -> (HOPE's name, the CPU device used in Figs. 4-6: "4 CPU cores" on LE, "2 big cores" on ME, HE).
PLATFORMS = {"hope-le": ("LE", "cpu"), "hope-me": ("ME", "big"), "hope-he": ("HE", "big")}
#: PN-M on HE: "43 ms running PNAS-M with CPU while 183 ms with GPU" (§5.2): the calibration's inputs.
PNM_HE_CPU_S, PNM_HE_GPU_S = 0.043, 0.183
#: On LE "the latency of ReLU is less than 0.1 ms while that of Conv2D may be more than 3 ms" (§3.2).
LE_RELU_MAX_S, LE_CONV_MIN_S = 1e-4, 3e-3

# -- Fig. 4: reductions of latency (%), each the average over the three phones (§5.2) --------------------
LP_VS_MOSAIC = {"IN-V3": 23.4, "IN-V4": 24.1, "PN-M": 2.9, "PN-L": 29.4, "NAS-L": 31.1, "SQZ": 21.3,
                "LSTM": 23.3}
LP_VS_STARPU = {"IN-V3": 13.7, "IN-V4": 9.1, "PN-M": 2.9, "PN-L": 17.9, "NAS-L": 18.0, "SQZ": 10.0,
                "LSTM": 0.0}
GS_VS_STARPU = {"IN-V3": 8.2, "IN-V4": 3.2, "PN-M": 0.5, "PN-L": 12.9, "NAS-L": 11.7, "SQZ": 0.0,
                "LSTM": 0.0}
#: The abstract: "up to 36.2% (average 22.0%) than MOSAIC, 22.0% (average 10.2%) than StarPU".
ABSTRACT_MOSAIC = (36.2, 22.0)
ABSTRACT_STARPU = (22.0, 10.2)
#: "HOPE exhibits a similar inference latency to that of the CPU alone version with PNAS-M on all
#: the three mobile systems" (§5.2).
PNM_SIMILAR_TO_CPU = 0.05

# -- Fig. 5: LE at three CPU frequencies, HOPE:LP's reductions (max %, average %) (§5.3) ------------------
FIG5 = {"min": {"MOSAIC": (26.4, 19.2), "StarPU": (17.2, 10.8)},
        "medium": {"MOSAIC": (25.2, 17.5), "StarPU": (20.4, 9.3)},
        "max": {"MOSAIC": (29.1, 22.1), "StarPU": (17.0, 10.3)}}

# -- Fig. 6: against μLayer on ACL (one layout) (§5.4) -------------------------------------------------
#: platform -> (HOPE:GS max %, HOPE:LP max %, HOPE's average %). The averages are the calibration's
#: inputs (μLayer's per-layer synchronisation is fitted to them, HOPE §5.4).
FIG6 = {"hope-he": (32.9, 40.6, 25.8), "hope-me": (32.8, 35.9, 21.3), "hope-le": (25.4, 28.0, 8.0)}
#: The abstract's "up to 41.8% (average 18.4%) than μLayer": 41.8 contradicts the text's 40.6 (§11.16).
ABSTRACT_MULAYER = (41.8, 18.4)

# -- Fig. 7: HE, 2 big + 4 LITTLE cores, CPU only: HOPE:LP's reductions against StarPU (%) (§5.5) ---------
FIG7_LP_VS_STARPU = {"IN-V3": 15.7, "IN-V4": 2.2, "PN-M": 2.6, "PN-L": 9.8, "NAS-L": 8.3, "SQZ": 3.2,
                     "LSTM": 0.0}

# -- scheduling time (§1, §3): "several seconds for the ILP ... less than one second for the heuristic" ----
GS_MAX_S = 1.0
LP_SECONDS = (1.0, 10.0)     # "several seconds" read as 1-10 s on the largest model [assumption]

# -- HOPE's parameters (§2.2, §3.1) -------------------------------------------------------------------
NT, EPS = 12, 0.2
K = {2: 4, 3: 3}

# -- tolerances, fixed before the first run (docs/papers/hope.md, "Reproduction") ----------------------
PP = 3.0          # a reduction averaged over phones or models: +-3 percentage points (docs/papers/hope.md)
PP_MAX = 5.0      # an "up to" reduction (one phone and model): +-5 points
MOST = 5          # "on most models": at least 5 of the 7
