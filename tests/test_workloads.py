"""Tests of the workload model (hetsim/workload) and the shipped networks (workloads/).

Reference values: Pipe-it's per-layer GEMM shapes (eq. 4 on ARM-CL's graph examples, whose
major-layer counts are Pipe-it Table I's), Pipe-search's and Shisha's layer weights (Pipe-search
§2.1, Eqs. 1-2) and CVs (Eq. 3), each derived by hand from the networks' published shapes.
"""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import networkx as nx
import numpy as np
import pytest

from hetsim.errors import HetsimError
from hetsim.workload import (
    Shape,
    list_workloads,
    load_workload,
    window_out_size,
    workload_from_dict,
)
from hetsim.workload.splits import (
    compositions,
    count_compositions,
    count_eq4_with_dups,
    cut_points,
    cv,
    cv_rank,
    cv_sorted,
    eq4_with_dups,
    split_from_cuts,
    stage_sums,
)

REPO = Path(__file__).resolve().parents[1]
MALFORMED = sorted((REPO / "tests" / "malformed" / "workloads").glob("*.yaml"))

LAYER_COUNTS = {
    "alexnet": 11, "googlenet": 58, "mobilenet": 28, "resnet50": 54, "squeezenet": 26,
    "vgg16": 21, "alexnet-ps": 11, "resnet50-shisha": 50, "yolov3": 52, "synthnet": 18,
    "synth1": 7, "synth2": 15, "synth3": 13,
}

# [derived]: total GMAC of the APPENDIX_A layer lists below.
PIPEIT_GMAC = {"alexnet": 0.724, "googlenet": 1.583, "mobilenet": 0.569, "resnet50": 3.482,
               "squeezenet": 0.819}

# Pipe-it eq. 4 on ARM-CL's graph examples, one row per major layer:
# (l, name, I, Id, F, Ofm, S, O, N, K, M, MMAC). Id is the whole input depth, Ofm the whole conv's
# output maps (AlexNet group nodes compute Ofm/2 each); FC rows give the flattened input as Id.
APPENDIX_A = {
    "alexnet": [
        (1, "conv1", 227, 3, 11, 96, 4, 55, 3025, 363, 96, 105.4),
        (2, "conv2_g1", 27, 96, 5, 256, 1, 27, 729, 1200, 128, 112.0),
        (3, "conv2_g2", 27, 96, 5, 256, 1, 27, 729, 1200, 128, 112.0),
        (4, "conv3", 13, 256, 3, 384, 1, 13, 169, 2304, 384, 149.5),
        (5, "conv4_g1", 13, 384, 3, 384, 1, 13, 169, 1728, 192, 56.1),
        (6, "conv4_g2", 13, 384, 3, 384, 1, 13, 169, 1728, 192, 56.1),
        (7, "conv5_g1", 13, 384, 3, 256, 1, 13, 169, 1728, 128, 37.4),
        (8, "conv5_g2", 13, 384, 3, 256, 1, 13, 169, 1728, 128, 37.4),
        (9, "fc6", 1, 9216, 1, 4096, 1, 1, 1, 9216, 4096, 37.7),
        (10, "fc7", 1, 4096, 1, 4096, 1, 1, 1, 4096, 4096, 16.8),
        (11, "fc8", 1, 4096, 1, 1000, 1, 1, 1, 4096, 1000, 4.1),
    ],
    "googlenet": [
        (1, "conv1/7x7_s2", 224, 3, 7, 64, 2, 112, 12544, 147, 64, 118.0),
        (2, "conv2/3x3_reduce", 56, 64, 1, 64, 1, 56, 3136, 64, 64, 12.8),
        (3, "conv2/3x3", 56, 64, 3, 192, 1, 56, 3136, 576, 192, 346.8),
        (4, "inception_3a/1x1", 28, 192, 1, 64, 1, 28, 784, 192, 64, 9.6),
        (5, "inception_3a/3x3_reduce", 28, 192, 1, 96, 1, 28, 784, 192, 96, 14.5),
        (6, "inception_3a/3x3", 28, 96, 3, 128, 1, 28, 784, 864, 128, 86.7),
        (7, "inception_3a/5x5_reduce", 28, 192, 1, 16, 1, 28, 784, 192, 16, 2.4),
        (8, "inception_3a/5x5", 28, 16, 5, 32, 1, 28, 784, 400, 32, 10.0),
        (9, "inception_3a/pool_proj", 28, 192, 1, 32, 1, 28, 784, 192, 32, 4.8),
        (10, "inception_3b/1x1", 28, 256, 1, 128, 1, 28, 784, 256, 128, 25.7),
        (11, "inception_3b/3x3_reduce", 28, 256, 1, 128, 1, 28, 784, 256, 128, 25.7),
        (12, "inception_3b/3x3", 28, 128, 3, 192, 1, 28, 784, 1152, 192, 173.4),
        (13, "inception_3b/5x5_reduce", 28, 256, 1, 32, 1, 28, 784, 256, 32, 6.4),
        (14, "inception_3b/5x5", 28, 32, 5, 96, 1, 28, 784, 800, 96, 60.2),
        (15, "inception_3b/pool_proj", 28, 256, 1, 64, 1, 28, 784, 256, 64, 12.8),
        (16, "inception_4a/1x1", 14, 480, 1, 192, 1, 14, 196, 480, 192, 18.1),
        (17, "inception_4a/3x3_reduce", 14, 480, 1, 96, 1, 14, 196, 480, 96, 9.0),
        (18, "inception_4a/3x3", 14, 96, 3, 208, 1, 14, 196, 864, 208, 35.2),
        (19, "inception_4a/5x5_reduce", 14, 480, 1, 16, 1, 14, 196, 480, 16, 1.5),
        (20, "inception_4a/5x5", 14, 16, 5, 48, 1, 14, 196, 400, 48, 3.8),
        (21, "inception_4a/pool_proj", 14, 480, 1, 64, 1, 14, 196, 480, 64, 6.0),
        (22, "inception_4b/1x1", 14, 512, 1, 160, 1, 14, 196, 512, 160, 16.1),
        (23, "inception_4b/3x3_reduce", 14, 512, 1, 112, 1, 14, 196, 512, 112, 11.2),
        (24, "inception_4b/3x3", 14, 112, 3, 224, 1, 14, 196, 1008, 224, 44.3),
        (25, "inception_4b/5x5_reduce", 14, 512, 1, 24, 1, 14, 196, 512, 24, 2.4),
        (26, "inception_4b/5x5", 14, 24, 5, 64, 1, 14, 196, 600, 64, 7.5),
        (27, "inception_4b/pool_proj", 14, 512, 1, 64, 1, 14, 196, 512, 64, 6.4),
        (28, "inception_4c/1x1", 14, 512, 1, 128, 1, 14, 196, 512, 128, 12.8),
        (29, "inception_4c/3x3_reduce", 14, 512, 1, 128, 1, 14, 196, 512, 128, 12.8),
        (30, "inception_4c/3x3", 14, 128, 3, 256, 1, 14, 196, 1152, 256, 57.8),
        (31, "inception_4c/5x5_reduce", 14, 512, 1, 24, 1, 14, 196, 512, 24, 2.4),
        (32, "inception_4c/5x5", 14, 24, 5, 64, 1, 14, 196, 600, 64, 7.5),
        (33, "inception_4c/pool_proj", 14, 512, 1, 64, 1, 14, 196, 512, 64, 6.4),
        (34, "inception_4d/1x1", 14, 512, 1, 112, 1, 14, 196, 512, 112, 11.2),
        (35, "inception_4d/3x3_reduce", 14, 512, 1, 144, 1, 14, 196, 512, 144, 14.5),
        (36, "inception_4d/3x3", 14, 144, 3, 288, 1, 14, 196, 1296, 288, 73.2),
        (37, "inception_4d/5x5_reduce", 14, 512, 1, 32, 1, 14, 196, 512, 32, 3.2),
        (38, "inception_4d/5x5", 14, 32, 5, 64, 1, 14, 196, 800, 64, 10.0),
        (39, "inception_4d/pool_proj", 14, 512, 1, 64, 1, 14, 196, 512, 64, 6.4),
        (40, "inception_4e/1x1", 14, 528, 1, 256, 1, 14, 196, 528, 256, 26.5),
        (41, "inception_4e/3x3_reduce", 14, 528, 1, 160, 1, 14, 196, 528, 160, 16.6),
        (42, "inception_4e/3x3", 14, 160, 3, 320, 1, 14, 196, 1440, 320, 90.3),
        (43, "inception_4e/5x5_reduce", 14, 528, 1, 32, 1, 14, 196, 528, 32, 3.3),
        (44, "inception_4e/5x5", 14, 32, 5, 128, 1, 14, 196, 800, 128, 20.1),
        (45, "inception_4e/pool_proj", 14, 528, 1, 128, 1, 14, 196, 528, 128, 13.2),
        (46, "inception_5a/1x1", 7, 832, 1, 256, 1, 7, 49, 832, 256, 10.4),
        (47, "inception_5a/3x3_reduce", 7, 832, 1, 160, 1, 7, 49, 832, 160, 6.5),
        (48, "inception_5a/3x3", 7, 160, 3, 320, 1, 7, 49, 1440, 320, 22.6),
        (49, "inception_5a/5x5_reduce", 7, 832, 1, 32, 1, 7, 49, 832, 32, 1.3),
        (50, "inception_5a/5x5", 7, 32, 5, 128, 1, 7, 49, 800, 128, 5.0),
        (51, "inception_5a/pool_proj", 7, 832, 1, 128, 1, 7, 49, 832, 128, 5.2),
        (52, "inception_5b/1x1", 7, 832, 1, 384, 1, 7, 49, 832, 384, 15.7),
        (53, "inception_5b/3x3_reduce", 7, 832, 1, 192, 1, 7, 49, 832, 192, 7.8),
        (54, "inception_5b/3x3", 7, 192, 3, 384, 1, 7, 49, 1728, 384, 32.5),
        (55, "inception_5b/5x5_reduce", 7, 832, 1, 48, 1, 7, 49, 832, 48, 2.0),
        (56, "inception_5b/5x5", 7, 48, 5, 128, 1, 7, 49, 1200, 128, 7.5),
        (57, "inception_5b/pool_proj", 7, 832, 1, 128, 1, 7, 49, 832, 128, 5.2),
        (58, "loss3/classifier", 1, 1024, 1, 1000, 1, 1, 1, 1024, 1000, 1.0),
    ],
    "mobilenet": [
        (1, "Conv2d_0", 224, 3, 3, 32, 2, 112, 12544, 27, 32, 10.8),
        (2, "Conv2d_1_dw", 112, 32, 3, 32, 1, 112, 12544, 9, 32, 3.6),
        (3, "Conv2d_1_pw", 112, 32, 1, 64, 1, 112, 12544, 32, 64, 25.7),
        (4, "Conv2d_2_dw", 112, 64, 3, 64, 2, 56, 3136, 9, 64, 1.8),
        (5, "Conv2d_2_pw", 56, 64, 1, 128, 1, 56, 3136, 64, 128, 25.7),
        (6, "Conv2d_3_dw", 56, 128, 3, 128, 1, 56, 3136, 9, 128, 3.6),
        (7, "Conv2d_3_pw", 56, 128, 1, 128, 1, 56, 3136, 128, 128, 51.4),
        (8, "Conv2d_4_dw", 56, 128, 3, 128, 2, 28, 784, 9, 128, 0.9),
        (9, "Conv2d_4_pw", 28, 128, 1, 256, 1, 28, 784, 128, 256, 25.7),
        (10, "Conv2d_5_dw", 28, 256, 3, 256, 1, 28, 784, 9, 256, 1.8),
        (11, "Conv2d_5_pw", 28, 256, 1, 256, 1, 28, 784, 256, 256, 51.4),
        (12, "Conv2d_6_dw", 28, 256, 3, 256, 2, 14, 196, 9, 256, 0.5),
        (13, "Conv2d_6_pw", 14, 256, 1, 512, 1, 14, 196, 256, 512, 25.7),
        (14, "Conv2d_7_dw", 14, 512, 3, 512, 1, 14, 196, 9, 512, 0.9),
        (15, "Conv2d_7_pw", 14, 512, 1, 512, 1, 14, 196, 512, 512, 51.4),
        (16, "Conv2d_8_dw", 14, 512, 3, 512, 1, 14, 196, 9, 512, 0.9),
        (17, "Conv2d_8_pw", 14, 512, 1, 512, 1, 14, 196, 512, 512, 51.4),
        (18, "Conv2d_9_dw", 14, 512, 3, 512, 1, 14, 196, 9, 512, 0.9),
        (19, "Conv2d_9_pw", 14, 512, 1, 512, 1, 14, 196, 512, 512, 51.4),
        (20, "Conv2d_10_dw", 14, 512, 3, 512, 1, 14, 196, 9, 512, 0.9),
        (21, "Conv2d_10_pw", 14, 512, 1, 512, 1, 14, 196, 512, 512, 51.4),
        (22, "Conv2d_11_dw", 14, 512, 3, 512, 1, 14, 196, 9, 512, 0.9),
        (23, "Conv2d_11_pw", 14, 512, 1, 512, 1, 14, 196, 512, 512, 51.4),
        (24, "Conv2d_12_dw", 14, 512, 3, 512, 2, 7, 49, 9, 512, 0.2),
        (25, "Conv2d_12_pw", 7, 512, 1, 1024, 1, 7, 49, 512, 1024, 25.7),
        (26, "Conv2d_13_dw", 7, 1024, 3, 1024, 1, 7, 49, 9, 1024, 0.5),
        (27, "Conv2d_13_pw", 7, 1024, 1, 1024, 1, 7, 49, 1024, 1024, 51.4),
        (28, "Logits(1x1conv)", 1, 1024, 1, 1001, 1, 1, 1, 1024, 1001, 1.0),
    ],
    "resnet50": [
        (1, "conv1", 224, 3, 7, 64, 2, 112, 12544, 147, 64, 118.0),
        (2, "b1u1/conv1", 56, 64, 1, 64, 1, 56, 3136, 64, 64, 12.8),
        (3, "b1u1/conv2", 56, 64, 3, 64, 1, 56, 3136, 576, 64, 115.6),
        (4, "b1u1/conv3", 56, 64, 1, 256, 1, 56, 3136, 64, 256, 51.4),
        (5, "b1u1/shortcut", 56, 64, 1, 256, 1, 56, 3136, 64, 256, 51.4),
        (6, "b1u2/conv1", 56, 256, 1, 64, 1, 56, 3136, 256, 64, 51.4),
        (7, "b1u2/conv2", 56, 64, 3, 64, 1, 56, 3136, 576, 64, 115.6),
        (8, "b1u2/conv3", 56, 64, 1, 256, 1, 56, 3136, 64, 256, 51.4),
        (9, "b1u3/conv1", 56, 256, 1, 64, 1, 56, 3136, 256, 64, 51.4),
        (10, "b1u3/conv2", 56, 64, 3, 64, 2, 28, 784, 576, 64, 28.9),
        (11, "b1u3/conv3", 28, 64, 1, 256, 1, 28, 784, 64, 256, 12.8),
        (12, "b2u1/conv1", 28, 256, 1, 128, 1, 28, 784, 256, 128, 25.7),
        (13, "b2u1/conv2", 28, 128, 3, 128, 1, 28, 784, 1152, 128, 115.6),
        (14, "b2u1/conv3", 28, 128, 1, 512, 1, 28, 784, 128, 512, 51.4),
        (15, "b2u1/shortcut", 28, 256, 1, 512, 1, 28, 784, 256, 512, 102.8),
        (16, "b2u2/conv1", 28, 512, 1, 128, 1, 28, 784, 512, 128, 51.4),
        (17, "b2u2/conv2", 28, 128, 3, 128, 1, 28, 784, 1152, 128, 115.6),
        (18, "b2u2/conv3", 28, 128, 1, 512, 1, 28, 784, 128, 512, 51.4),
        (19, "b2u3/conv1", 28, 512, 1, 128, 1, 28, 784, 512, 128, 51.4),
        (20, "b2u3/conv2", 28, 128, 3, 128, 1, 28, 784, 1152, 128, 115.6),
        (21, "b2u3/conv3", 28, 128, 1, 512, 1, 28, 784, 128, 512, 51.4),
        (22, "b2u4/conv1", 28, 512, 1, 128, 1, 28, 784, 512, 128, 51.4),
        (23, "b2u4/conv2", 28, 128, 3, 128, 2, 14, 196, 1152, 128, 28.9),
        (24, "b2u4/conv3", 14, 128, 1, 512, 1, 14, 196, 128, 512, 12.8),
        (25, "b3u1/conv1", 14, 512, 1, 256, 1, 14, 196, 512, 256, 25.7),
        (26, "b3u1/conv2", 14, 256, 3, 256, 1, 14, 196, 2304, 256, 115.6),
        (27, "b3u1/conv3", 14, 256, 1, 1024, 1, 14, 196, 256, 1024, 51.4),
        (28, "b3u1/shortcut", 14, 512, 1, 1024, 1, 14, 196, 512, 1024, 102.8),
        (29, "b3u2/conv1", 14, 1024, 1, 256, 1, 14, 196, 1024, 256, 51.4),
        (30, "b3u2/conv2", 14, 256, 3, 256, 1, 14, 196, 2304, 256, 115.6),
        (31, "b3u2/conv3", 14, 256, 1, 1024, 1, 14, 196, 256, 1024, 51.4),
        (32, "b3u3/conv1", 14, 1024, 1, 256, 1, 14, 196, 1024, 256, 51.4),
        (33, "b3u3/conv2", 14, 256, 3, 256, 1, 14, 196, 2304, 256, 115.6),
        (34, "b3u3/conv3", 14, 256, 1, 1024, 1, 14, 196, 256, 1024, 51.4),
        (35, "b3u4/conv1", 14, 1024, 1, 256, 1, 14, 196, 1024, 256, 51.4),
        (36, "b3u4/conv2", 14, 256, 3, 256, 1, 14, 196, 2304, 256, 115.6),
        (37, "b3u4/conv3", 14, 256, 1, 1024, 1, 14, 196, 256, 1024, 51.4),
        (38, "b3u5/conv1", 14, 1024, 1, 256, 1, 14, 196, 1024, 256, 51.4),
        (39, "b3u5/conv2", 14, 256, 3, 256, 1, 14, 196, 2304, 256, 115.6),
        (40, "b3u5/conv3", 14, 256, 1, 1024, 1, 14, 196, 256, 1024, 51.4),
        (41, "b3u6/conv1", 14, 1024, 1, 256, 1, 14, 196, 1024, 256, 51.4),
        (42, "b3u6/conv2", 14, 256, 3, 256, 2, 7, 49, 2304, 256, 28.9),
        (43, "b3u6/conv3", 7, 256, 1, 1024, 1, 7, 49, 256, 1024, 12.8),
        (44, "b4u1/conv1", 7, 1024, 1, 512, 1, 7, 49, 1024, 512, 25.7),
        (45, "b4u1/conv2", 7, 512, 3, 512, 1, 7, 49, 4608, 512, 115.6),
        (46, "b4u1/conv3", 7, 512, 1, 2048, 1, 7, 49, 512, 2048, 51.4),
        (47, "b4u1/shortcut", 7, 1024, 1, 2048, 1, 7, 49, 1024, 2048, 102.8),
        (48, "b4u2/conv1", 7, 2048, 1, 512, 1, 7, 49, 2048, 512, 51.4),
        (49, "b4u2/conv2", 7, 512, 3, 512, 1, 7, 49, 4608, 512, 115.6),
        (50, "b4u2/conv3", 7, 512, 1, 2048, 1, 7, 49, 512, 2048, 51.4),
        (51, "b4u3/conv1", 7, 2048, 1, 512, 1, 7, 49, 2048, 512, 51.4),
        (52, "b4u3/conv2", 7, 512, 3, 512, 1, 7, 49, 4608, 512, 115.6),
        (53, "b4u3/conv3", 7, 512, 1, 2048, 1, 7, 49, 512, 2048, 51.4),
        (54, "logits(1x1conv)", 1, 2048, 1, 1000, 1, 1, 1, 2048, 1000, 2.0),
    ],
    "squeezenet": [
        (1, "conv1", 224, 3, 7, 96, 2, 109, 11881, 147, 96, 167.7),
        (2, "fire2/squeeze1x1", 54, 96, 1, 16, 1, 54, 2916, 96, 16, 4.5),
        (3, "fire2/expand1x1", 54, 16, 1, 64, 1, 54, 2916, 16, 64, 3.0),
        (4, "fire2/expand3x3", 54, 16, 3, 64, 1, 54, 2916, 144, 64, 26.9),
        (5, "fire3/squeeze1x1", 54, 128, 1, 16, 1, 54, 2916, 128, 16, 6.0),
        (6, "fire3/expand1x1", 54, 16, 1, 64, 1, 54, 2916, 16, 64, 3.0),
        (7, "fire3/expand3x3", 54, 16, 3, 64, 1, 54, 2916, 144, 64, 26.9),
        (8, "fire4/squeeze1x1", 54, 128, 1, 32, 1, 54, 2916, 128, 32, 11.9),
        (9, "fire4/expand1x1", 54, 32, 1, 128, 1, 54, 2916, 32, 128, 11.9),
        (10, "fire4/expand3x3", 54, 32, 3, 128, 1, 54, 2916, 288, 128, 107.5),
        (11, "fire5/squeeze1x1", 27, 256, 1, 32, 1, 27, 729, 256, 32, 6.0),
        (12, "fire5/expand1x1", 27, 32, 1, 128, 1, 27, 729, 32, 128, 3.0),
        (13, "fire5/expand3x3", 27, 32, 3, 128, 1, 27, 729, 288, 128, 26.9),
        (14, "fire6/squeeze1x1", 27, 256, 1, 48, 1, 27, 729, 256, 48, 9.0),
        (15, "fire6/expand1x1", 27, 48, 1, 192, 1, 27, 729, 48, 192, 6.7),
        (16, "fire6/expand3x3", 27, 48, 3, 192, 1, 27, 729, 432, 192, 60.5),
        (17, "fire7/squeeze1x1", 27, 384, 1, 48, 1, 27, 729, 384, 48, 13.4),
        (18, "fire7/expand1x1", 27, 48, 1, 192, 1, 27, 729, 48, 192, 6.7),
        (19, "fire7/expand3x3", 27, 48, 3, 192, 1, 27, 729, 432, 192, 60.5),
        (20, "fire8/squeeze1x1", 27, 384, 1, 64, 1, 27, 729, 384, 64, 17.9),
        (21, "fire8/expand1x1", 27, 64, 1, 256, 1, 27, 729, 64, 256, 11.9),
        (22, "fire8/expand3x3", 27, 64, 3, 256, 1, 27, 729, 576, 256, 107.5),
        (23, "fire9/squeeze1x1", 13, 512, 1, 64, 1, 13, 169, 512, 64, 5.5),
        (24, "fire9/expand1x1", 13, 64, 1, 256, 1, 13, 169, 64, 256, 2.8),
        (25, "fire9/expand3x3", 13, 64, 3, 256, 1, 13, 169, 576, 256, 24.9),
        (26, "conv10", 13, 512, 1, 1000, 1, 13, 169, 512, 1000, 86.5),
    ],
}

# VGG16 weights (M) from Pipe-search §2.1: Eq. 1 / Eq. 2 / pool = input size.
VGG16_WEIGHTS_M = [86.7, 1849.7, 3.2, 924.8, 1849.7, 1.6, 924.8, 1849.7, 1849.7, 0.8, 924.8,
                   1849.7, 1849.7, 0.4, 462.4, 462.4, 462.4, 0.1, 102.8, 16.8, 4.1]

SYNTH_WEIGHTS = {
    "synth1": [1, 4, 8, 4, 8, 8, 4],
    "synth2": [1, 9, 4, 8, 5, 4, 8, 5, 7, 1, 1, 1, 4, 8, 22],
    "synth3": [1, 9, 4, 8, 20, 2, 22, 3, 4, 8, 7, 11, 11],
}

# Synth CVs (Eq. 3, population σ, ×100) and ranks within depth (stable sort of the compositions
# in lexicographic cut-point order; None = Table 7 gives no rank: the seeds).
SYNTH_VECTORS = [
    ("synth1", (3, 2, 2), 3.82, None),
    ("synth1", (4, 1, 1, 1), 51.49, 6),
    ("synth1", (5, 1, 1), 73.82, 10),
    ("synth2", (8, 7), 0.0, None),
    ("synth2", (4, 4, 6, 1), 0.0, None),
    ("synth2", (4, 7, 4), 18.53, 8),
    ("synth2", (8, 6, 1), 35.36, 23),
    ("synth3", (4, 2, 1, 4, 2), 0.0, None),
    ("synth3", (3, 1, 2, 1, 4, 2), 29.82, 8),
    ("synth3", (7, 4, 2), 56.57, 24),
]


def mega(x: float) -> float:
    return round(x / 1e6, 1)


@pytest.fixture(scope="module")
def zoo():
    return {name: load_workload(name) for name in LAYER_COUNTS}


# -- the shipped networks -------------------------------------------------------------------
def test_every_shipped_workload_is_listed():
    assert set(LAYER_COUNTS) <= set(list_workloads())


@pytest.mark.parametrize("name, layers", sorted(LAYER_COUNTS.items()))
def test_layer_counts(zoo, name, layers):
    w = zoo[name]
    assert w.num_layers == layers == len(w.layers)
    assert [lay.index for lay in w.layers] == list(range(1, layers + 1))
    assert w.layer(layers) is w.layers[-1]


@pytest.mark.parametrize("name", sorted(APPENDIX_A))
def test_pipeit_appendix_a_rows(zoo, name):
    w = zoo[name]
    rows = APPENDIX_A[name]
    assert len(rows) == w.num_layers
    for l_idx, label, size, Id, F, Ofm, S, out, N, K, M, mmac in rows:
        op = w.layer(l_idx).major
        assert op.name == label.replace("(1x1conv)", ""), (name, l_idx)
        assert op.gemm == (N, K, M), (name, label)
        assert abs(op.macs / 1e6 - mmac) <= 0.05 + 1e-9, (name, label, op.macs)
        assert op.out_shape.h == op.out_shape.w == out, (name, label)
        if op.kind == "fc":
            assert op.in_shape.elements == Id, (name, label)
        else:
            parts = op.group_node[1] if op.group_node else 1
            assert (op.in_shape.h, op.in_shape.c, op.kernel, op.out_c * parts, op.stride) == (
                size, Id, (F, F), Ofm, S), (name, label)


@pytest.mark.parametrize("name, gmac", sorted(PIPEIT_GMAC.items()))
def test_pipeit_total_gmac(zoo, name, gmac):
    assert round(zoo[name].total_macs / 1e9, 3) == gmac
    # The folded non-major ops add no MACs: the layers' MACs are their major op's.
    assert all(lay.macs == lay.major.macs for lay in zoo[name].layers)


def test_pipeit_dags_have_their_real_branches(zoo):
    res = zoo["resnet50"]
    assert sum(op.kind == "add" for op in res.ops) == 16
    assert res.op("b1u1/add").inputs == ("b1u1/conv3/BatchNorm", "b1u1/shortcut/BatchNorm")
    assert res.op("b1u3/shortcut/MaxPool").out_shape == Shape(28, 28, 256)
    goog = zoo["googlenet"]
    concat = goog.op("inception_3a/output")
    assert concat.out_shape == Shape(28, 28, 256) and len(concat.inputs) == 4
    assert goog.op("inception_5b/output").out_shape.c == 1024
    sq = zoo["squeezenet"]
    assert sq.op("fire9/concat").out_shape == Shape(13, 13, 512)
    alex = zoo["alexnet"]
    assert alex.op("conv2_concat").out_shape == Shape(27, 27, 256)
    assert alex.op("conv2_g2").input_bytes * 2 == alex.op("pool1").output_bytes
    mob = zoo["mobilenet"]
    assert mob.layer(1).major.out_shape == Shape(112, 112, 32)  # pad (0, 1), see Appendix A
    assert mob.op("Conv2d_2_dw").pad == (0, 1)


def test_output_ops_are_the_ops_nobody_reads(zoo):
    read = {src for op in zoo["googlenet"].ops for src in op.inputs}
    assert zoo["googlenet"].output_ops == tuple(op.name for op in zoo["googlenet"].ops if op.name not in read)
    assert zoo["resnet50"].output_ops == (zoo["resnet50"].ops[-1].name,)


def test_vgg16_weight_hints(zoo):
    w = zoo["vgg16"]
    assert [mega(x) for x in w.layer_weights()] == VGG16_WEIGHTS_M
    assert [lay.name for lay in w.layers][:3] == ["conv1_1", "conv1_2", "pool1"]
    assert round(w.total_weight_hint / 1e9, 2) == 15.48


def test_vgg16_pipe_search_vectors(zoo):
    weights = zoo["vgg16"].layer_weights()
    # Paper I Table 6 ranks.
    assert [cv_rank(weights, t) for t in [(6, 5, 10), (7, 4, 10), (9, 12), (5, 16)]] == [1, 3, 2, 7]
    seeds = {k: cv_sorted(weights, k)[0] for k in (2, 3, 4)}
    assert {k: (s, round(100 * c, 1)) for k, (s, c) in seeds.items()} == {
        2: ((8, 13), 3.2), 3: ((6, 5, 10), 6.6), 4: ((4, 4, 4, 9), 20.1)}
    assert [s for s, _ in cv_sorted(weights, 2)][:10] == [
        (8, 13), (9, 12), (10, 11), (7, 14), (11, 10), (6, 15), (5, 16), (12, 9), (4, 17), (3, 18)]


def test_eq4_and_composition_counts():
    assert [len(list(eq4_with_dups(21, k))) for k in (2, 3, 4)] == [20, 222, 1728]
    assert sum(count_eq4_with_dups(21, k) for k in (2, 3, 4)) == 1970
    assert sum(count_compositions(21, k) for k in (2, 3, 4)) == 1350
    assert sum(len(set(eq4_with_dups(21, k))) for k in (2, 3, 4)) == 1350
    assert [count_eq4_with_dups(M, k) for M, k in [(7, 3), (10, 4), (3, 5)]] == [
        len(list(eq4_with_dups(M, k))) for M, k in [(7, 3), (10, 4), (3, 5)]]


def test_compositions_order_and_cut_points():
    assert list(compositions(4, 2)) == [(1, 3), (2, 2), (3, 1)]
    assert list(compositions(5, 3))[:3] == [(1, 1, 3), (1, 2, 2), (1, 3, 1)]
    assert len(list(compositions(21, 4))) == count_compositions(21, 4) == 1140
    assert list(compositions(2, 3)) == [] and count_compositions(2, 3) == 0
    assert cut_points((7, 4, 10)) == (7, 11)
    assert split_from_cuts((7, 11), 21) == (7, 4, 10)
    assert stage_sums([1, 4, 8, 4, 8, 8, 4], (3, 2, 2)) == [13, 12, 12]
    with pytest.raises(HetsimError, match="summing to 7"):
        cv([1, 4, 8, 4, 8, 8, 4], (3, 3))


@pytest.mark.parametrize("name, split, cv_pct, rank", SYNTH_VECTORS)
def test_synth_cv_vectors(zoo, name, split, cv_pct, rank):
    weights = zoo[name].layer_weights()
    assert round(100 * cv(weights, split), 2) == cv_pct
    assert round(100 * cv(SYNTH_WEIGHTS[name], split), 2) == cv_pct
    if rank is not None:
        assert cv_rank(weights, split) == rank


@pytest.mark.parametrize("name", sorted(SYNTH_WEIGHTS))
def test_synth_weights_are_exactly_proportional(zoo, name):
    w = zoo[name].layer_weights()
    unit = int(w.min())
    assert [int(x) for x in w] == [unit * k for k in SYNTH_WEIGHTS[name]]
    # Every layer hands the next a 56x56x64 tensor: a uniform, consistent chain.
    cuts = zoo[name].cut_bytes_array()
    assert set(cuts[1:-1].tolist()) == {56 * 56 * 64 * 4}


def test_alexnet_ps_weights(zoo):
    w = zoo["alexnet-ps"]
    assert [lay.name for lay in w.layers] == [
        "conv1", "pool1", "conv2", "pool2", "conv3", "conv4", "conv5", "pool5", "fc6", "fc7", "fc8"]
    convs = [mega(op.weight_hint) for op in w.ops if op.kind == "conv"]
    assert convs == [1795.7, 447.9, 149.5, 224.3, 149.5]  # Pipe-search Eq. 1
    assert w.op("fc6").in_shape == Shape(6, 6, 256) and w.op("conv2").groups == 1


def test_resnet50_shisha_weights(zoo):
    w = zoo["resnet50-shisha"]
    hints = {op.name: mega(op.weight_hint) for op in w.ops if op.kind in ("conv", "fc")}
    assert hints["conv1"] == 472.1
    assert hints["fc1000"] == 2.0
    assert hints["res2a_branch2a"] == 12.8
    assert [hints[f"res{s}a_branch2a"] for s in (3, 4, 5)] == [102.8] * 3
    assert [v for k, v in hints.items() if k.endswith("branch2b")] == [115.6] * 16
    other_1x1 = [v for k, v in hints.items() if k.endswith(("branch2a", "branch2c"))
                 and k not in ("res2a_branch2a", "res3a_branch2a", "res4a_branch2a",
                               "res5a_branch2a")]
    assert set(other_1x1) == {51.4}
    # The projection shortcuts are not among the 50 layers: they fold into the branch2c layer.
    for s in (2, 3, 4, 5):
        proj = w.op(f"res{s}a_branch1")
        assert not proj.starts_layer
        assert w.layer(proj.layer).name == f"res{s}a_branch2c"
    assert round(w.total_macs / 1e9, 2) == 3.86


def test_yolov3_weights(zoo):
    w = zoo["yolov3"]
    convs = [op for op in w.ops if op.kind == "conv"]
    assert len(convs) == 52 and all(op.starts_layer for op in convs)
    hints = [mega(op.weight_hint) for op in convs]
    assert hints[0] == 149.5
    assert sorted(set(hints)) == [88.6, 149.5, 797.4, 3189.8]
    assert hints.count(3189.8) == 5 and hints.count(797.4) == hints.count(88.6) == 23
    assert round(w.total_weight_hint / 1e9, 1) == 36.5
    assert sum(op.kind == "add" for op in w.ops) == 23
    assert w.ops[-1].out_shape == Shape(13, 13, 1024)


def test_synthnet_replicates_alexnet_convs(zoo):
    w = zoo["synthnet"]
    pattern = ["conv1", "conv2", "conv3", "conv4", "conv5"] * 3 + ["conv1", "conv2", "conv3"]
    assert [lay.name.split("_")[0] for lay in w.layers] == pattern
    ref = {op.name: op.weight_hint for op in zoo["alexnet-ps"].ops if op.kind == "conv"}
    assert [lay.major.weight_hint for lay in w.layers] == [ref[p] for p in pattern]
    restarts = [op.name for op in w.ops if op.shape_override]
    assert restarts == ["conv1_r2", "conv1_r3", "conv1_r4"]
    # The hand-over at a replica boundary is what conv5's pool produced, not the image.
    assert w.cut_bytes(5) == 6 * 6 * 256 * 4


# -- graph structure ------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(LAYER_COUNTS))
def test_dag_is_acyclic_and_ops_are_topological(zoo, name):
    w = zoo[name]
    assert nx.is_directed_acyclic_graph(w.graph)
    position = {op.name: i for i, op in enumerate(w.ops)}
    assert all(position[u] < position[v] for u, v in w.graph.edges)
    assert list(w.graph.nodes) == [op.name for op in w.ops]
    # Layers are contiguous runs of ops and 1-based.
    assert [op.layer for op in w.ops] == sorted(op.layer for op in w.ops)
    assert w.ops[0].layer == 1 and w.ops[-1].layer == w.num_layers
    with pytest.raises(nx.NetworkXError):
        w.graph.add_node("x")  # frozen: workloads are shared and cached


@pytest.mark.parametrize("name", sorted(LAYER_COUNTS))
def test_cut_bytes_match_their_definition(zoo, name):
    w = zoo[name]
    cuts = w.cut_bytes_array()
    assert cuts.dtype == np.int64 and len(cuts) == w.num_layers + 1
    assert cuts[0] == cuts[-1] == 0
    assert not cuts.flags.writeable
    for c in range(1, w.num_layers):
        crossing = {u for u, v in w.graph.edges
                    if w.graph.nodes[u]["layer"] <= c < w.graph.nodes[v]["layer"]}
        assert cuts[c] == w.cut_bytes(c) == sum(w.op(u).output_bytes for u in crossing)


def test_cut_inside_a_residual_unit_carries_the_skip(zoo):
    w = zoo["resnet50"]
    c = 6  # after b1u2/conv1: the main path (64 ch) and the unit input (256 ch) both cross
    last = w.layer(c).ops[-1]
    assert last.name == "b1u2/conv1/Relu"
    assert w.cut_bytes(c) > last.output_bytes
    assert w.cut_bytes(c) == last.output_bytes + w.op("b1u1/Relu").output_bytes
    # Between units only the unit output crosses.
    assert w.cut_bytes(8) == w.op("b1u2/Relu").output_bytes


def test_layer_sums_and_summary(zoo):
    w = zoo["resnet50"]
    assert sum(lay.macs for lay in w.layers) == w.total_macs == int(w.layer_macs().sum())
    assert all(lay.flops >= 2 * lay.macs for lay in w.layers)
    df = w.summary()
    assert len(df) == 54 and df.index[0] == 1
    assert {"name", "kinds", "macs", "gemm", "weight_hint", "weight_bytes", "output_bytes",
            "cut_bytes"} <= set(df.columns)
    assert df.loc[5, "name"] == "b1u1/shortcut" and df.loc[5, "kinds"] == "conv,bn,add,relu"
    with pytest.raises(HetsimError, match="out of range"):
        w.layer(55)


def test_op_quantities(zoo):
    alex = zoo["alexnet"]
    fc6 = alex.op("fc6")
    assert fc6.gemm == (1, 9216, 4096) and fc6.gemm_groups == 1
    assert fc6.weight_bytes == (9216 * 4096 + 4096) * 4
    assert fc6.weight_hint == 6 * 6 * 256 * 4096  # Eq. 2
    assert fc6.flops == 2 * fc6.macs and fc6.im2col_bytes == 0
    g = alex.op("conv2_g1")
    assert g.im2col_bytes == 729 * 1200 * 4 and g.output_bytes == 27 * 27 * 128 * 4
    pool = alex.op("pool1")
    assert pool.macs == 0 and pool.flops == 27 * 27 * 96 * 9 and pool.weight_hint == 55 * 55 * 96
    mob = zoo["mobilenet"]
    dw = mob.op("Conv2d_2_dw")
    assert dw.gemm == (3136, 9, 64) and dw.macs == 3136 * 9 * 64
    assert dw.weight_hint == 112 * 112 * 64 * 9 and dw.weight_bytes == (9 * 64 + 64) * 4
    assert mob.op("Conv2d_1_dw/BatchNorm").weight_bytes == 4 * 32 * 4
    stride2 = zoo["resnet50"].op("b1u3/conv2")
    assert stride2.weight_hint == 4 * stride2.macs  # Eq. 1 ignores stride (Pipe-search §2.1)


def test_grouped_single_node_conv():
    w = workload_from_dict({
        "schema": 1, "name": "g", "input": {"h": 8, "w": 8, "c": 16}, "layer_kinds": ["conv"],
        "ops": [{"name": "c", "kind": "conv", "kernel": 3, "pad": 1, "out_c": 32, "groups": 4}],
    })
    op = w.op("c")
    assert op.gemm == (64, 36, 8) and op.gemm_groups == 4
    assert op.macs == 64 * 36 * 8 * 4 and op.im2col_bytes == 64 * 36 * 4 * 4


def test_window_out_size_rounding():
    assert window_out_size(224, 7, 2, (3, 3)) == 112
    assert window_out_size(112, 3, 2, (0, 1)) == 56
    assert window_out_size(54, 3, 2, (0, 0)) == 26
    assert window_out_size(54, 3, 2, (0, 0), ceil_mode=True) == 27
    assert window_out_size(7, 9, 1, (0, 0)) < 1


# -- layering rule and loader ---------------------------------------------------------------
def _tiny(ops, layer_kinds=("conv",)):
    return {"schema": 1, "name": "tiny", "input": {"h": 8, "w": 8, "c": 3},
            "layer_kinds": list(layer_kinds), "ops": ops}


def test_layering_rule_and_overrides():
    w = workload_from_dict(_tiny([
        {"name": "pre", "kind": "relu"},  # before the first layer start: joins layer 1
        {"name": "c1", "kind": "conv", "kernel": 3, "pad": 1, "out_c": 8},
        {"name": "r1", "kind": "relu"},
        {"name": "c2", "kind": "conv", "kernel": 1, "out_c": 8, "layer_start": False},
        {"name": "p", "kind": "maxpool", "kernel": 2, "stride": 2, "layer_start": True},
        {"name": "c3", "kind": "conv", "kernel": 1, "out_c": 4, "inputs": []},
    ]))
    assert [(lay.name, [op.name for op in lay.ops]) for lay in w.layers] == [
        ("c1", ["pre", "c1", "r1", "c2"]), ("p", ["p"]), ("c3", ["c3"])]
    # c3 reads the network input from layer 3: the input crosses cuts 1 and 2.
    assert w.cut_bytes(2) == 8 * 8 * 3 * 4
    assert w.cut_bytes(1) == 8 * 8 * 3 * 4 + w.op("c2").output_bytes


def test_pydantic_errors_are_one_line_with_the_field_path():
    with pytest.raises(HetsimError) as e:
        workload_from_dict(_tiny([{"name": "c", "kind": "conv", "kernel": 3, "out_c": True}]),
                           "mem.yaml")
    assert str(e.value).startswith("mem.yaml: ops.c.out_c: ")
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("path", MALFORMED, ids=[p.stem for p in MALFORMED])
def test_malformed_workloads_are_rejected(path):
    first = path.read_text().splitlines()[0]
    assert first.startswith("# expect: "), path
    expected = first[len("# expect: "):]
    with pytest.raises(HetsimError) as e:
        load_workload(path)
    message = str(e.value)
    assert expected in message
    assert "\n" not in message and path.name in message


def test_at_least_six_malformed_files():
    assert len(MALFORMED) >= 6


def test_unknown_name_lists_the_available_ones():
    with pytest.raises(HetsimError, match=r"unknown workload 'resnet51'; available: .*resnet50"):
        load_workload("resnet51")
    with pytest.raises(HetsimError, match="no such workload file"):
        load_workload("does/not/exist.yaml")


def test_search_path_cache_and_env(tmp_path, monkeypatch):
    assert load_workload("synth1") is load_workload("synth1")
    assert load_workload("synth1") is load_workload(REPO / "workloads" / "synth1.yaml")
    # $HETSIM_WORKLOADS comes first on the search path.
    shutil.copy(REPO / "workloads" / "synth1.yaml", tmp_path / "synth1.yaml")
    (tmp_path / "mine.yaml").write_text(
        "schema: 1\nname: mine\ninput: {h: 4, w: 4, c: 2}\nlayer_kinds: [fc]\n"
        "ops:\n  - {name: f, kind: fc, out_c: 3}\n")
    monkeypatch.setenv("HETSIM_WORKLOADS", str(tmp_path))
    assert "mine" in list_workloads()
    assert load_workload("mine").op("f").gemm == (1, 32, 3)
    assert load_workload("synth1").path == (tmp_path / "synth1.yaml").resolve()


# -- the generator --------------------------------------------------------------------------
def test_generator_reproduces_the_committed_files():
    spec = importlib.util.spec_from_file_location("make_zoo", REPO / "workloads" / "make_zoo.py")
    make_zoo = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make_zoo)
    rendered = make_zoo.render_all()
    on_disk = {p.name for p in (REPO / "workloads").glob("*.yaml")}
    assert set(rendered) == on_disk
    for fname, text in rendered.items():
        assert (REPO / "workloads" / fname).read_bytes() == text.encode(), fname


def test_a_pooling_that_strides_past_its_kernel_reads_only_the_pixels_its_windows_cover():
    # ResNet50's shortcut subsampling (1x1 max pool, stride 2) reads one row in two and one
    # column in two: a quarter of its input; pools whose windows touch or overlap read it all.
    from hetsim.workload.ops import covered_extent

    r50 = load_workload("resnet50")
    sub = r50.op("b1u3/shortcut/MaxPool")
    assert sub.kernel == (1, 1) and sub.stride == 2
    assert sub.input_bytes * 4 == sub.in_shape.elements * sub.elem_bytes == 56 * 56 * 256 * 4
    for name in ("pool1/MaxPool", "pool5"):
        op = r50.op(name)
        assert op.input_bytes == op.in_shape.elements * op.elem_bytes
    assert covered_extent(7, 3, 1, 3, 0) == 3            # rows 0, 3, 6
    assert covered_extent(8, 3, 2, 3, 1) == 5            # windows [-1,1), [2,4), [5,7): 1 + 2 + 2
    assert covered_extent(9, 4, 3, 2, 0) == 9            # stride <= kernel: every row
    wl = workload_from_dict({"schema": 1, "name": "sub", "input": {"h": 9, "w": 9, "c": 2}, "layer_kinds": ["maxpool"],
                             "ops": [{"name": "p", "kind": "maxpool", "kernel": 2, "stride": 4}]})
    assert wl.op("p").input_bytes == 4 * 4 * 2 * 4      # windows at 0 and 4: rows 0, 1, 4, 5
