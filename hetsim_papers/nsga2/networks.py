"""The CNNs of the hybrid-partitioning thesis (seed 004) as generated ONNX models.

Savva's MSc thesis (Leiden 2023, "Hybrid CNN Partitioning On Edge Devices") spreads AlexNet,
VGG-16 and DenseNet-121 over Jetson Xavier NX boards with AutoDiCE, which consumes ONNX models and
names a layer by its ONNX node (the first output's name when the node has none). The thesis used
the ONNX model zoo's files: its Table 2 "Size" column is the zoo READMEs' listed file sizes (238,
527.8 and 32 MB) and AutoDiCE's own AlexNet example maps the zoo's ``bvlcalexnet-9.onnx``. Each
network here is that zoo model rebuilt node for node, in its ONNX node order, with its tensor
shapes, kernels, strides, pads and groups (thesis Table 2, §5.1)::

    from hetsim_papers.nsga2.networks import alexnet, splittable, split_channels
    model = alexnet()                    # 24 nodes, conv1_1 ... prob_1
    sum(splittable(model).values())      # 8: 5 Conv + 3 Gemm (thesis §4.2.1)
    split_channels(model)["fc6_1"]       # 4096 output channels to share between devices

Every choice where the sources are silent is one line in docs/papers/nsga2.md ("Workloads").
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import TYPE_CHECKING

from hetsim.errors import HetsimError
from hetsim.workload.networks import Networks
from hetsim.workload.onnx_graph import OnnxGraph

if TYPE_CHECKING:   # onnx is imported when a network is built: listing them needs no [onnx] extra
    import onnx

#: The networks this paper generates (Plugin.networks).
NETWORKS = Networks()
register = NETWORKS.register

#: Layers the thesis may split horizontally by output channel (LOP, thesis §4.1):
#: Conv and fully connected (ONNX Gemm) layers, the layers with weights.
SPLITTABLE_OPS: tuple[str, ...] = ("Conv", "Gemm")

#: Thesis Table 2 (copied exactly): each CNN un-partitioned on one Xavier NX with 6 CPU cores.
#: "size_MB" is weight storage, "cpu_memory_MB" peak main memory during inference.
TABLE2: dict[str, dict[str, float]] = {
    "alexnet-onnx": {"layers": 24, "params_million": 60.8, "size_MB": 238,
                     "cpu_energy_J": 0.352, "cpu_memory_MB": 152.746, "cpu_latency_ms": 28.3},
    "vgg16-onnx": {"layers": 47, "params_million": 138, "size_MB": 528,
                   "cpu_energy_J": 1.959, "cpu_memory_MB": 446.852, "cpu_latency_ms": 122.46},
    "densenet121-onnx": {"layers": 910, "params_million": 8, "size_MB": 32,
                         "cpu_energy_J": 1.026, "cpu_memory_MB": 95.969, "cpu_latency_ms": 138.68},
}

#: AlexNet node -> the "Layer" label of the thesis's Table 4 (which inserts a Concat after each
#: split layer; those rows are mapping artefacts, not nodes of the model).
ALEXNET_TABLE4_LAYERS: dict[str, str] = {
    "conv1_1": "Conv_1", "conv1_2": "ReLU", "norm1_1": "LRN", "pool1_1": "MaxPool",
    "conv2_1": "Conv_2", "conv2_2": "ReLU", "norm2_1": "LRN", "pool2_1": "MaxPool",
    "conv3_1": "Conv_3", "conv3_2": "ReLU", "conv4_1": "Conv_4", "conv4_2": "ReLU",
    "conv5_1": "Conv_5", "conv5_2": "ReLU", "pool5_1": "MaxPool", "OC2_DUMMY_0": "Reshape",
    "fc6_1": "FC_6", "fc6_2": "ReLU", "fc6_3": "Dropout", "fc7_1": "FC_7", "fc7_2": "ReLU",
    "fc7_3": "Dropout", "fc8_1": "FC_8", "prob_1": "Softmax",
}


# =====================================================================================
# AlexNet: the zoo's bvlc_alexnet (Caffe BVLC -> Caffe2 -> ONNX)
# =====================================================================================
def alexnet_graph(*, ceil_mode: bool = True, groups: int = 2, weights: str = "external",
                  seed: int = 0) -> tuple[OnnxGraph, str]:
    """bvlc_alexnet's graph and its output tensor (see :func:`alexnet`)."""
    if groups not in (1, 2):
        raise HetsimError(f"alexnet: groups={groups!r}: allowed: 2 (bvlc_alexnet) or 1 "
                          "(single-tower)")
    g = OnnxGraph("bvlc_alexnet", weights=weights, seed=seed)
    x = g.input("data_0", (1, 3, 224, 224))
    # Names are the zoo model's tensors, which AutoDiCE uses as layer names (its mapping.json for
    # this model lists conv1_1, conv1_2, norm1_1, ..., OC2_DUMMY_0, fc6_1, ..., prob_1).
    x = g.relu(g.conv(x, 96, 11, stride=4, name="conv1_1"), name="conv1_2")
    # Caffe rounds pooled sizes up: 54 -> 27 -> 13 -> 6, so fc6 reads 256*6*6 = 9216 inputs.
    x = g.pool(g.lrn(x, 5, name="norm1_1"), "max", 3, 2, ceil=ceil_mode, name="pool1_1")
    x = g.relu(g.conv(x, 256, 5, pad=2, groups=groups, name="conv2_1"), name="conv2_2")
    x = g.pool(g.lrn(x, 5, name="norm2_1"), "max", 3, 2, ceil=ceil_mode, name="pool2_1")
    x = g.relu(g.conv(x, 384, 3, pad=1, name="conv3_1"), name="conv3_2")
    x = g.relu(g.conv(x, 384, 3, pad=1, groups=groups, name="conv4_1"), name="conv4_2")
    x = g.relu(g.conv(x, 256, 3, pad=1, groups=groups, name="conv5_1"), name="conv5_2")
    x = g.pool(x, "max", 3, 2, ceil=ceil_mode, name="pool5_1")
    x = g.reshape(x, (1, math.prod(g.shape(x)[1:])), name="OC2_DUMMY_0")
    for i, out in ((6, 4096), (7, 4096), (8, 1000)):
        x = g.gemm(x, out, name=f"fc{i}_1")
        if i < 8:
            x = g.unary("Dropout", g.relu(x, name=f"fc{i}_2"), name=f"fc{i}_3")
    return g, g.softmax(x, axis=1, name="prob_1")


def alexnet(*, ceil_mode: bool = True, groups: int = 2, weights: str = "external",
            seed: int = 0) -> onnx.ModelProto:
    """AlexNet as the thesis ran it: the ONNX zoo's bvlc_alexnet, 24 nodes.

    The 24 nodes are exactly Table 4's layer order (without its inserted Concats): 5 Conv, 7 ReLU,
    2 LRN, 3 MaxPool, Reshape, 3 Gemm, 2 Dropout, Softmax; input ``data_0`` [1, 3, 224, 224].
    ``ceil_mode=False`` gives the floor-pooled shapes Table 4 prints (26x26 after pool1, 12x12
    after pool2) and hence a 6400-input fc6; ``groups=1`` drops Caffe's two-tower grouping of
    conv2/4/5. Both contradict Table 2's 60.8 M parameters (the defaults give 60.97 M).
    """
    g, out = alexnet_graph(ceil_mode=ceil_mode, groups=groups, weights=weights, seed=seed)
    return g.model(out, doc="bvlc_alexnet as in the ONNX model zoo (hetsim-generated)")


# =====================================================================================
# VGG: the zoo's vgg16-7 (MXNet Gluon model zoo -> ONNX)
# =====================================================================================
_VGG_CONVS = {16: (2, 2, 3, 3, 3), 19: (2, 2, 4, 4, 4)}  # conv layers per stage (Simonyan §2.3)
_VGG_FIRST_FLATTEN = {16: 60, 19: 72}  # MXNet's auto-named Flatten nodes, then +5 per Dense


def vgg_graph(depth: int = 16, *, weights: str = "external",
              seed: int = 0) -> tuple[OnnxGraph, str]:
    """The zoo VGG's graph and its output tensor (see :func:`vgg`)."""
    if depth not in _VGG_CONVS:
        raise HetsimError(f"vgg: depth={depth!r}: allowed: 16, 19")
    g = OnnxGraph(f"vgg{depth}", weights=weights, seed=seed)
    x = g.input("data", (1, 3, 224, 224))
    conv = 0
    for stage, (n_convs, channels) in enumerate(zip(_VGG_CONVS[depth], (64, 128, 256, 512, 512),
                                                    strict=True)):
        for _ in range(n_convs):
            x = g.conv(x, channels, 3, pad=1, name=f"vgg0_conv{conv}_fwd")
            x = g.relu(x, name=f"vgg0_relu{conv}_fwd")
            conv += 1
        x = g.pool(x, "max", 2, 2, name=f"vgg0_pool{stage}_fwd")
    # MXNet exports every Dense (flatten=True) as Flatten + Gemm; no Softmax at the end.
    for i, out in enumerate((4096, 4096, 1000)):
        x = g.flatten(x, name=f"flatten_{_VGG_FIRST_FLATTEN[depth] + 5 * i}")
        x = g.gemm(x, out, name=f"vgg0_dense{i}_fwd")
        if i < 2:
            x = g.unary("Dropout", g.relu(x, name=f"vgg0_dense{i}_relu_fwd"),
                        name=f"vgg0_dropout{i}_fwd")
    return g, x


def vgg(depth: int = 16, *, weights: str = "external", seed: int = 0) -> onnx.ModelProto:
    """VGG (configuration D for depth 16, E for 19) as the ONNX zoo's MXNet export.

    VGG-16 is the zoo's vgg16-7 (527.8 MB, Table 2's "528"): 13 Conv, 15 ReLU, 5 MaxPool,
    3 Flatten, 3 Gemm, 2 Dropout = 41 nodes, input ``data``. Table 2's 47 is the node count of
    the same exporter's VGG-19 (``depth=19``), which has 143.7 M parameters, not 138 M.
    """
    g, out = vgg_graph(depth, weights=weights, seed=seed)
    return g.model(out, doc=f"vgg{depth} as in the ONNX model zoo (hetsim-generated)")


# =====================================================================================
# DenseNet-121: the zoo's densenet-121 (Caffe DenseNet-121 -> Caffe2 -> ONNX)
# =====================================================================================
_DENSE_BLOCKS = (6, 12, 24, 16)  # bottleneck layers per dense block (Huang et al., Table 1)
_GROWTH = 32  # growth rate k
_BOTTLENECK = 4 * _GROWTH  # 1x1 conv width of a bottleneck layer (DenseNet-B)


def _bn_scale_relu(g: OnnxGraph, x: str, layer: str) -> str:
    """Caffe's BatchNorm + Scale + ReLU on blob ``<layer>/bn``: 6 ONNX nodes.

    Caffe's BatchNorm has no affine part, so the zoo model keeps the Scale layer as a per-channel
    Mul and Add, each [C] parameter lifted to [C, 1, 1] by an Unsqueeze (the broadcast rewrite of
    the opset upgrade). Names follow Caffe2's in-place versioning of the blob: _1 .. _4.
    """
    c = g.shape(x)[1]
    blob = f"{layer}/bn"
    x = g.batch_norm(x, name=f"{blob}_1")
    gamma = g.unsqueeze(g.weight(f"{layer}/scale_w", (c,)), (1, 2), name=f"{layer}/scale_w_1")
    x = g.binary("Mul", x, gamma, name=f"{blob}_2")
    beta = g.unsqueeze(g.weight(f"{layer}/scale_b", (c,)), (1, 2), name=f"{layer}/scale_b_1")
    x = g.binary("Add", x, beta, name=f"{blob}_3")
    return g.relu(x, name=f"{blob}_4")


def densenet121_graph(*, ceil_mode: bool = False, weights: str = "external",
                      seed: int = 0) -> tuple[OnnxGraph, str]:
    """The zoo DenseNet-121's graph and its output tensor (see :func:`densenet121`)."""
    g = OnnxGraph("densenet121", weights=weights, seed=seed)
    x = g.input("data_0", (1, 3, 224, 224))
    x = g.conv(x, 64, 7, stride=2, pad=3, bias=False, name="conv1_1")
    x = g.pool(_bn_scale_relu(g, x, "conv1"), "max", 3, 2, pad=1, ceil=ceil_mode, name="pool1_1")
    for block, n_layers in enumerate(_DENSE_BLOCKS, start=2):  # Caffe numbers blocks 2..5
        for i in range(1, n_layers + 1):
            y = _bn_scale_relu(g, x, f"conv{block}_{i}/x1")
            y = g.conv(y, _BOTTLENECK, 1, bias=False, name=f"conv{block}_{i}/x1_1")
            y = _bn_scale_relu(g, y, f"conv{block}_{i}/x2")
            y = g.conv(y, _GROWTH, 3, pad=1, bias=False, name=f"conv{block}_{i}/x2_1")
            # Dense connectivity: each layer's output joins everything before it in the block.
            x = g.concat([x, y], name=f"concat_{block}_{i}_1")
        if block < 2 + len(_DENSE_BLOCKS) - 1:
            # Transition: BN-ReLU-1x1 conv with compression 0.5, then 2x2 average pooling.
            y = _bn_scale_relu(g, x, f"conv{block}_blk")
            y = g.conv(y, g.shape(y)[1] // 2, 1, bias=False, name=f"conv{block}_blk_1")
            x = g.pool(y, "avg", 2, 2, ceil=ceil_mode, name=f"pool{block}_1")
    x = g.global_avg_pool(_bn_scale_relu(g, x, "conv5_blk"), name="pool5_1")
    # The classifier is a 1x1 Conv with bias (Caffe's "fc6"): DenseNet has no FC layer (Table 2).
    return g, g.conv(x, 1000, 1, name="fc6_1")


def densenet121(*, ceil_mode: bool = False, weights: str = "external",
                seed: int = 0) -> onnx.ModelProto:
    """DenseNet-121 as the ONNX zoo's densenet-121: 910 nodes, output ``fc6_1`` [1, 1000, 1, 1].

    910 = 121 x (BatchNormalization, Unsqueeze, Mul, Unsqueeze, Add, Relu, Conv) + 58 Concat
    + 5 pools. Spatial sizes 112 / 56 / 28 / 14 / 7 as in the DenseNet paper; ``ceil_mode=True``
    rounds pooled sizes up as Caffe does (57 / 29 / 15 / 8), which the zoo model may have kept.
    """
    g, out = densenet121_graph(ceil_mode=ceil_mode, weights=weights, seed=seed)
    return g.model(out, doc="densenet-121 as in the ONNX model zoo (hetsim-generated)")


# =====================================================================================
# Splittable layers (thesis §4.1, §4.2): Conv and FC, split by output channel
# =====================================================================================
def node_name(node: onnx.NodeProto) -> str:
    """A node's layer name as AutoDiCE gives it: its name, or its first output's if unnamed."""
    return node.name or node.output[0]


def _check_ops(ops: Iterable[str]) -> frozenset[str]:
    chosen = frozenset(ops)
    bad = sorted(chosen - set(SPLITTABLE_OPS))
    if bad or not chosen:
        raise HetsimError(f"splittable ops: {bad[0] if bad else 'none given'!r} is not allowed; "
                          f"allowed: a non-empty subset of {', '.join(SPLITTABLE_OPS)}")
    return chosen


def _weighted(node: onnx.NodeProto, initializers: set[str]) -> bool:
    # A Gemm (or Conv) whose second input is an activation has no weights to split (attention).
    return len(node.input) > 1 and node.input[1] in initializers


def splittable(model: onnx.ModelProto, ops: Iterable[str] = SPLITTABLE_OPS) -> dict[str, bool]:
    """Each node's layer name, in ONNX node order, -> whether the thesis may split it.

    Splittable means a layer with weights whose op is in ``ops`` (default Conv and Gemm; pass
    ``("Gemm",)`` for the thesis's FC-only example of §4.2.1). Everything else (ReLU, pools, LRN,
    BatchNormalization, Concat, Dropout, Reshape, Softmax, ...) is only placed whole.
    """
    chosen = _check_ops(ops)
    inits = {t.name for t in model.graph.initializer}
    return {node_name(n): n.op_type in chosen and _weighted(n, inits) for n in model.graph.node}


def split_channels(model: onnx.ModelProto) -> dict[str, int]:
    """N^Θ of each splittable layer (the output channels LOP deals out, thesis §4.1 / Fig. 7b):
    a Conv's filters, a Gemm's output features."""
    dims = {t.name: tuple(t.dims) for t in model.graph.initializer}
    out: dict[str, int] = {}
    for n in model.graph.node:
        if n.op_type in SPLITTABLE_OPS and _weighted(n, set(dims)):
            w = dims[n.input[1]]
            trans_b = any(a.name == "transB" and a.i for a in n.attribute)
            out[node_name(n)] = w[0] if n.op_type == "Conv" or trans_b else w[1]
    return out


def parameter_count(model: onnx.ModelProto) -> int:
    """Stored float parameters (weights, biases, BatchNorm statistics); integer shape and axes
    constants are not parameters."""
    from onnx import TensorProto

    return sum(math.prod(t.dims) for t in model.graph.initializer
               if t.data_type == TensorProto.FLOAT)


def weight_bytes(model: onnx.ModelProto) -> int:
    """Bytes of the stored parameters in fp32 (Table 2's "Size" is this storage)."""
    return 4 * parameter_count(model)


# -- the registry ---------------------------------------------------------------------------
@register("alexnet-onnx")
def alexnet_onnx() -> onnx.ModelProto:
    """AlexNet of the thesis (seed 004): the ONNX zoo's bvlc_alexnet, 24 nodes."""
    return alexnet()


@register("vgg16-onnx")
def vgg16_onnx() -> onnx.ModelProto:
    """VGG-16 of the thesis (seed 004): the ONNX zoo's vgg16-7, 41 nodes."""
    return vgg(16)


@register("densenet121-onnx")
def densenet121_onnx() -> onnx.ModelProto:
    """DenseNet-121 of the thesis (seed 004): the ONNX zoo's densenet-121, 910 nodes."""
    return densenet121()
