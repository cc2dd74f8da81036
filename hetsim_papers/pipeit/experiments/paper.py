"""What Pipe-it (Wang et al., IEEE TCAD 2019) states, as the reproduction compares it; section,
table and equation numbers are the paper's own (docs/papers/pipeit.md)."""

from __future__ import annotations

NETWORKS = ("alexnet", "googlenet", "mobilenet", "resnet50", "squeezenet")
LABELS = {"alexnet": "AlexNet", "googlenet": "GoogLeNet", "mobilenet": "MobileNet",
          "resnet50": "ResNet50", "squeezenet": "SqueezeNet"}
FRAMES = 50                 # [paper] a stream of 50 images per data point
CONFIGS = ("B1", "B2", "B3", "B4", "s1", "s2", "s3", "s4")

#: Table I: ARM-CL major layers W.
TABLE_I = {"alexnet": 11, "googlenet": 58, "mobilenet": 28, "resnet50": 54, "squeezenet": 26}
#: Table III [paper] (%), columns 1B..4B, 1s..4s.
TABLE_III = {
    "alexnet": (11.3, 11.9, 12.3, 13.1, 9.6, 10.5, 10.5, 11.1),
    "googlenet": (13.8, 15.0, 15.1, 15.0, 8.8, 9.5, 9.6, 8.9),
    "mobilenet": (21.5, 19.5, 17.2, 17.7, 18.6, 17.1, 17.2, 18.5),
    "resnet50": (8.2, 7.5, 8.0, 8.4, 11.5, 10.9, 11.1, 12.1),
    "squeezenet": (18.1, 17.9, 18.0, 17.7, 13.9, 13.0, 11.8, 12.7),
}
TABLE_III_AVERAGE = {"B": 13.2, "s": 11.4}
#: Table IV: Big (B4), Small (s4), Pipe-it with measured / predicted layer times (imgs/s), benefit (%).
TABLE_IV = {
    "alexnet": (8.1, 1.5, 8.9, 8.9, 9.8),
    "googlenet": (7.8, 3.3, 11.8, 11.3, 45.5),
    "mobilenet": (17.4, 6.6, 24.0, 23.5, 35.5),
    "resnet50": (3.1, 1.5, 5.5, 5.2, 67.5),
    "squeezenet": (15.6, 6.9, 21.4, 21.4, 37.5),
}
TABLE_IV_AVERAGE_BENEFIT = 39.2
#: Tables V (predicted T) and VI (measured T) [paper]: configuration and 1-based layer ranges.
TABLE_V = {
    "alexnet": ("B4-s4", [(1, 9), (10, 11)]),
    "googlenet": ("B4-s2-s1-s1", [(1, 29), (30, 41), (42, 45), (46, 58)]),
    "mobilenet": ("B2-B2-s3-s1", [(1, 11), (12, 21), (22, 26), (27, 28)]),
    "resnet50": ("B4-s2-s2", [(1, 35), (36, 44), (45, 54)]),
    "squeezenet": ("B4-s4", [(1, 16), (17, 26)]),
}
TABLE_VI = {
    "alexnet": ("B4-s4", [(1, 9), (10, 11)]),
    "googlenet": ("B4-s2-s1-s1", [(1, 25), (26, 39), (40, 44), (45, 58)]),
    "mobilenet": ("B2-B2-s3-s1", [(1, 11), (12, 19), (20, 26), (27, 28)]),
    "resnet50": ("B2-B2-s3-s1", [(1, 16), (17, 34), (35, 47), (48, 54)]),
    "squeezenet": ("B4-s4", [(1, 19), (20, 26)]),
}
#: Table VII (3 Big + 2 Small): B3, s2, Pipe-it (imgs/s), configuration, benefit (%).
TABLE_VII = {
    "alexnet": (5.7, 0.7, 5.8, "B3-s2", 1.5),
    "googlenet": (6.2, 0.7, 7.4, "B3-s2", 19.3),
    "mobilenet": (14.2, 3.7, 15.3, "B3-s2", 7.1),
    "resnet50": (2.8, 1.0, 3.7, "B3-s1-s1", 31.5),
    "squeezenet": (11.4, 3.6, 13.5, "B3-s2", 18.1),
}
TABLE_VII_AVERAGE_BENEFIT = 15.5
#: Table VIII: active power Big / Small / Pipe-it (W), efficiency Big / Small / Pipe-it (imgs/J).
TABLE_VIII = {
    "alexnet": (3.8, 0.7, 5.1, 2.1, 2.1, 1.8),
    "googlenet": (4.6, 1.1, 6.6, 1.7, 3.1, 1.7),
    "mobilenet": (4.2, 1.0, 5.9, 4.2, 6.6, 4.0),
    "resnet50": (4.0, 1.0, 6.5, 0.8, 1.5, 0.8),
    "squeezenet": (4.9, 1.3, 6.9, 3.2, 5.5, 3.1),
}
#: Fig. 8 [paper]: optimal B4-s4 split ratio X/W from 0.60 (GoogLeNet) to 0.90 (AlexNet).
FIG8_RANGE = (0.60, 0.90)
#: Fig. 9 [paper]: ResNet50 B4-s2-s2 peaks at 5.6 imgs/s at X1 = 33, X2 = 45; +7 % over the best B4-s4.
FIG9_PEAK = (33, 45, 5.6, 7.0)
#: Reading "most CNNs" of Fig. 5 as 3 of the 5.
FIG5_MOST = 3
