"""The hybrid-partitioning thesis's CNNs (seed 004) as generated ONNX models (hetsim_papers.nsga2.networks).

Expected vectors come from the thesis (Table 2, Table 4, §4.2.1's chromosome lengths), from
AutoDiCE's AlexNet mapping, and from the published architectures counted independently here.
"""

from __future__ import annotations

from collections import Counter

import networkx as nx
import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import helper

from hetsim.errors import HetsimError
from hetsim.workload.networks import generated
from hetsim.workload.onnx_graph import OnnxGraph
from hetsim_papers.nsga2.networks import (
    ALEXNET_TABLE4_LAYERS,
    TABLE2,
    alexnet,
    alexnet_graph,
    densenet121,
    densenet121_graph,
    node_name,
    parameter_count,
    split_channels,
    splittable,
    vgg,
    vgg_graph,
    weight_bytes,
)

# AutoDiCE's mapping.json for bvlcalexnet-9.onnx (AutoDiCE_examples README): every node, in order.
AUTODICE_ALEXNET = [
    "conv1_1", "conv1_2", "norm1_1", "pool1_1", "conv2_1", "conv2_2", "norm2_1", "pool2_1",
    "conv3_1", "conv3_2", "conv4_1", "conv4_2", "conv5_1", "conv5_2", "pool5_1", "OC2_DUMMY_0",
    "fc6_1", "fc6_2", "fc6_3", "fc7_1", "fc7_2", "fc7_3", "fc8_1", "prob_1"]

# Thesis Table 4, "Layer" column, with its inserted Concat rows (l_2, l_11, l_16, l_21, l_25, l_29).
TABLE4_LAYERS = [
    "Conv_1", "Concat", "ReLU", "LRN", "MaxPool", "Conv_2", "ReLU", "LRN", "MaxPool", "Conv_3",
    "Concat", "ReLU", "Conv_4", "ReLU", "Conv_5", "Concat", "ReLU", "MaxPool", "Reshape", "FC_6",
    "Concat", "ReLU", "Dropout", "FC_7", "Concat", "ReLU", "Dropout", "FC_8", "Concat", "Softmax"]


@pytest.fixture(scope="module")
def models():
    return {"alexnet": alexnet(), "vgg16": vgg(16), "densenet121": densenet121()}


def _names(model):
    return [node_name(n) for n in model.graph.node]


# -- node counts and order --------------------------------------------------------------------
def test_node_counts(models):
    assert len(models["alexnet"].graph.node) == TABLE2["alexnet-onnx"]["layers"] == 24
    assert len(models["densenet121"].graph.node) == TABLE2["densenet121-onnx"]["layers"] == 910
    # Residual: the zoo's VGG-16 (MXNet export) has 41 nodes, not Table 2's 47; 47 is the count of
    # the same exporter's VGG-19 (docs/papers/nsga2.md, Workloads).
    assert len(models["vgg16"].graph.node) == 41
    assert len(vgg(19).graph.node) == 47


def test_alexnet_is_autodice_and_table4_order(models):
    names = _names(models["alexnet"])
    assert names == AUTODICE_ALEXNET
    assert [ALEXNET_TABLE4_LAYERS[n] for n in names] == [x for x in TABLE4_LAYERS if x != "Concat"]
    ops = Counter(n.op_type for n in models["alexnet"].graph.node)
    assert ops == {"Conv": 5, "Relu": 7, "LRN": 2, "MaxPool": 3, "Reshape": 1, "Gemm": 3,
                   "Dropout": 2, "Softmax": 1}
    conv2 = models["alexnet"].graph.node[4]
    assert {a.name: helper.get_attribute_value(a) for a in conv2.attribute}["group"] == 2


def test_vgg16_names_and_ops(models):
    names = _names(models["vgg16"])
    assert names[:5] == ["vgg0_conv0_fwd", "vgg0_relu0_fwd", "vgg0_conv1_fwd", "vgg0_relu1_fwd",
                         "vgg0_pool0_fwd"]
    assert names[-10:] == ["flatten_60", "vgg0_dense0_fwd", "vgg0_dense0_relu_fwd",
                           "vgg0_dropout0_fwd", "flatten_65", "vgg0_dense1_fwd",
                           "vgg0_dense1_relu_fwd", "vgg0_dropout1_fwd", "flatten_70",
                           "vgg0_dense2_fwd"]
    assert Counter(n.op_type for n in models["vgg16"].graph.node) == {
        "Conv": 13, "Relu": 15, "MaxPool": 5, "Flatten": 3, "Gemm": 3, "Dropout": 2}


def test_densenet_composition(models):
    # 910 = 121 x (BN, Unsqueeze, Mul, Unsqueeze, Add, Relu, Conv) + 58 Concat + 5 pools.
    assert Counter(n.op_type for n in models["densenet121"].graph.node) == {
        "Conv": 121, "BatchNormalization": 121, "Unsqueeze": 242, "Mul": 121, "Add": 121,
        "Relu": 121, "Concat": 58, "MaxPool": 1, "AveragePool": 3, "GlobalAveragePool": 1}
    m = models["densenet121"]
    assert m.graph.input[0].name == "data_0" and m.graph.output[0].name == "fc6_1"


# -- Table 2: parameters and sizes ---------------------------------------------------------------
def _conv(cout, cin, k, groups=1, bias=True):
    return cout * (cin // groups) * k * k + (cout if bias else 0)


def test_parameter_counts_match_the_architectures(models):
    alex = (_conv(96, 3, 11) + _conv(256, 96, 5, 2) + _conv(384, 256, 3) + _conv(384, 384, 3, 2)
            + _conv(256, 384, 3, 2) + 9216 * 4096 + 4096 + 4096 * 4096 + 4096 + 4096 * 1000 + 1000)
    assert parameter_count(models["alexnet"]) == alex == 60_965_224
    chans = [3, 64, 64, 128, 128, 256, 256, 256, 512, 512, 512, 512, 512, 512]
    vgg16 = sum(_conv(b, a, 3) for a, b in zip(chans, chans[1:], strict=False))
    vgg16 += 25088 * 4096 + 4096 + 4096 * 4096 + 4096 + 4096 * 1000 + 1000
    assert parameter_count(models["vgg16"]) == vgg16 == 138_357_544
    # DenseNet-121: every BN unit stores 6 C floats (BN scale, bias, mean, var + Scale's gamma, beta).
    dn, c = _conv(64, 3, 7, bias=False) + 6 * 64, 64
    for i, n_layers in enumerate((6, 12, 24, 16)):
        for _ in range(n_layers):
            dn += 6 * c + _conv(128, c, 1, bias=False) + 6 * 128 + _conv(32, 128, 3, bias=False)
            c += 32
        if i < 3:
            dn += 6 * c + _conv(c // 2, c, 1, bias=False)
            c //= 2
    dn += 6 * c + _conv(1000, c, 1)
    assert parameter_count(models["densenet121"]) == dn == 8_146_152
    # Without BN's stored statistics and Caffe's identity scale/bias: torchvision's 7,978,856.
    bn_channels = sum(t.dims[0] for t in models["densenet121"].graph.initializer
                      if t.name.endswith(".mean"))
    assert dn - 4 * bn_channels == 7_978_856


def test_table2_parameters_and_sizes(models):
    alex, v16, dn = (models[k] for k in ("alexnet", "vgg16", "densenet121"))
    # Exact to Table 2's rounding for VGG-16 (138 million) and DenseNet-121 (8 million).
    assert round(parameter_count(v16) / 1e6) == TABLE2["vgg16-onnx"]["params_million"]
    assert round(parameter_count(dn) / 1e6) == TABLE2["densenet121-onnx"]["params_million"]
    # Residual: AlexNet has 60.97 M, Table 2 says 60.8 M (-0.27 %); no faithful variant gives 60.8.
    assert parameter_count(alex) / 1e6 == pytest.approx(60.965224)
    assert abs(parameter_count(alex) / 1e6 / 60.8 - 1) < 0.003
    # Size = the zoo's listed file sizes, whose READMEs use different units: bvlc_alexnet's and
    # densenet-121's read bytes / 1024 / 1000, vgg16-7's bytes / 2^20.
    assert round(weight_bytes(alex) / 1024 / 1000) == TABLE2["alexnet-onnx"]["size_MB"] == 238
    assert round(weight_bytes(dn) / 1024 / 1000) == TABLE2["densenet121-onnx"]["size_MB"] == 32
    assert round(weight_bytes(v16) / 2**20) == TABLE2["vgg16-onnx"]["size_MB"] == 528
    assert weight_bytes(alex) / 2**20 == pytest.approx(232.56, abs=0.01)
    assert weight_bytes(dn) / 2**20 == pytest.approx(31.08, abs=0.01)
    # The zoo README lists VGG-19 at 548.1 MB: the same units for the depth-19 variant.
    assert round(weight_bytes(vgg(19)) / 2**20, 1) == 548.0


def test_alexnet_variants_are_further_from_table2():
    floor = alexnet(ceil_mode=False)  # Table 4's printed shapes: fc6 reads 256 x 5 x 5 = 6400
    single = alexnet(groups=1)
    assert parameter_count(floor) == 60_965_224 - 4096 * (9216 - 6400) == 49_430_888
    assert parameter_count(single) == 62_378_344
    best = abs(parameter_count(alexnet()) - 60.8e6)
    assert best < abs(parameter_count(single) - 60.8e6) < abs(parameter_count(floor) - 60.8e6)


# -- shapes ---------------------------------------------------------------------------------
def test_named_layer_shapes():
    g, _ = alexnet_graph()
    assert g.shape("conv1_1") == (1, 96, 54, 54)  # Table 4: Y_1[54x54x96]
    assert g.shape("pool1_1") == (1, 96, 27, 27)
    assert g.shape("conv2_1") == (1, 256, 27, 27)  # Table 4 prints 26x26 (floor pooling)
    assert g.shape("conv3_1") == g.shape("conv4_1") == (1, 384, 13, 13)  # Table 4 prints 12x12
    assert g.shape("conv5_1") == (1, 256, 13, 13)
    assert g.shape("OC2_DUMMY_0") == (1, 9216)
    assert g.shape("fc6_1") == g.shape("fc7_1") == (1, 4096) and g.shape("prob_1") == (1, 1000)
    g, _ = alexnet_graph(ceil_mode=False)
    assert g.shape("conv2_1") == (1, 256, 26, 26) and g.shape("conv3_1") == (1, 384, 12, 12)
    g, _ = vgg_graph(16)
    assert g.shape("vgg0_conv0_fwd") == (1, 64, 224, 224)
    assert g.shape("vgg0_pool4_fwd") == (1, 512, 7, 7)
    assert g.shape("flatten_60") == (1, 25088) and g.shape("vgg0_dense2_fwd") == (1, 1000)
    g, _ = densenet121_graph()
    assert g.shape("conv1_1") == (1, 64, 112, 112) and g.shape("pool1_1") == (1, 64, 56, 56)
    assert g.shape("concat_2_6_1") == (1, 256, 56, 56)
    assert g.shape("conv2_blk_1") == (1, 128, 56, 56) and g.shape("pool2_1") == (1, 128, 28, 28)
    assert g.shape("concat_3_12_1") == (1, 512, 28, 28)
    assert g.shape("concat_4_24_1") == (1, 1024, 14, 14)
    assert g.shape("concat_5_16_1") == (1, 1024, 7, 7) and g.shape("fc6_1") == (1, 1000, 1, 1)
    g, _ = densenet121_graph(ceil_mode=True)  # Caffe's rounding up
    assert [g.shape(p)[2] for p in ("pool1_1", "pool2_1", "pool3_1", "pool4_1")] == [57, 29, 15, 8]
    assert g.shape("fc6_1") == (1, 1000, 1, 1)


@pytest.mark.parametrize("build", [alexnet_graph, lambda: alexnet_graph(ceil_mode=False),
                                   vgg_graph, lambda: vgg_graph(19), densenet121_graph,
                                   lambda: densenet121_graph(ceil_mode=True)])
def test_onnx_shape_inference_agrees_with_the_builder(build):
    g, out = build()
    inferred = onnx.shape_inference.infer_shapes(g.model(out), strict_mode=True, data_prop=True)
    shapes = {v.name: tuple(d.dim_value for d in v.type.tensor_type.shape.dim)
              for v in [*inferred.graph.value_info, *inferred.graph.output]}
    outputs = [o for n in g.nodes for o in n.output]
    assert {o: shapes.get(o) for o in outputs} == {o: g.shape(o) for o in outputs}


def test_graphs_are_acyclic_and_in_topological_order(models):
    for model in models.values():
        producer = {o: node_name(n) for n in model.graph.node for o in n.output}
        known = {i.name for i in model.graph.input} | {t.name for t in model.graph.initializer}
        dag = nx.DiGraph()
        dag.add_nodes_from(_names(model))
        for n in model.graph.node:
            for i in n.input:
                assert i in known, f"{node_name(n)} reads {i} before it is produced"
                if i in producer:
                    dag.add_edge(producer[i], node_name(n))
            known.update(n.output)
        assert nx.is_directed_acyclic_graph(dag)
        assert len(dag) == len(model.graph.node)  # names are unique
    alex = models["alexnet"]
    assert nx.is_simple_path(_dag(alex), _names(alex))  # a chain in Table 4's order
    dn = _dag(models["densenet121"])
    # Dense connectivity: a block's running concat feeds the next layer and the next concat.
    assert sorted(dn.successors("concat_2_1_1")) == ["concat_2_2_1", "conv2_2/x1/bn_1"]
    assert sorted(dn.successors("pool1_1")) == ["concat_2_1_1", "conv2_1/x1/bn_1"]
    roots = [v for v in dn if dn.in_degree(v) == 0]
    assert len(roots) == 243 and "conv1_1" in roots  # plus the 242 Unsqueezes of Scale params


def _dag(model):
    producer = {o: node_name(n) for n in model.graph.node for o in n.output}
    dag = nx.DiGraph()
    dag.add_nodes_from(_names(model))
    dag.add_edges_from((producer[i], node_name(n)) for n in model.graph.node for i in n.input
                       if i in producer)
    return dag


def test_random_alexnet_passes_the_checker_and_runs():
    serialized = alexnet(weights="random", seed=1).SerializeToString()  # 244 MB: serialize once
    onnx.checker.check_model(serialized)  # shape inference is checked on its own above
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(serialized, options, providers=["CPUExecutionProvider"])
    x = np.random.default_rng(0).standard_normal((1, 3, 224, 224), dtype=np.float32)
    (prob,) = session.run(None, {"data_0": x})
    assert prob.shape == (1, 1000) and prob.sum() == pytest.approx(1.0, abs=1e-4)


def test_random_densenet_runs_without_nan():
    model = densenet121(weights="random", seed=1)
    onnx.checker.check_model(model)
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(model.SerializeToString(), options,
                                   providers=["CPUExecutionProvider"])
    x = np.random.default_rng(0).standard_normal((1, 3, 224, 224), dtype=np.float32)
    (y,) = session.run(None, {"data_0": x})
    assert y.shape == (1, 1000, 1, 1) and np.isfinite(y).all()


# -- splittable layers ---------------------------------------------------------------------
def test_alexnet_splittable_vector_and_chromosome_lengths(models):
    alex = models["alexnet"]
    flags = list(splittable(alex).values())
    # Conv_1..Conv_5 and FC_6..FC_8 of Table 4 (Concat rows dropped).
    assert [int(f) for f in flags] == [1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 0, 1, 0, 0, 0,
                                       1, 0, 0, 1, 0, 0, 1, 0]
    # Thesis §4.2.1, eq. 4.5 (length = sp * n + layers - sp) on 5 devices: 36 with only the FC
    # layers splittable, 56 with Conv and FC.
    n_devices, layers = 5, len(flags)
    for ops, length in ((("Gemm",), 36), (("Conv", "Gemm"), 56)):
        sp = sum(splittable(alex, ops).values())
        assert sp * n_devices + layers - sp == length
    # §4.2.2: advanced genes take values 0..S, S = 8 splittable layers: 9^(p*n) for p = n = 5.
    assert sum(flags) + 1 == 9


def test_splittable_counts_and_channels(models):
    assert sum(splittable(models["vgg16"]).values()) == 16
    dn = splittable(models["densenet121"])
    assert sum(dn.values()) == 121 and dn["fc6_1"]  # 120 Conv + the 1x1 Conv classifier
    assert not dn["conv1/bn_1"] and not dn["conv1/bn_2"]  # BN and Scale's Mul are not split
    channels = split_channels(models["alexnet"])
    assert channels == {"conv1_1": 96, "conv2_1": 256, "conv3_1": 384, "conv4_1": 384,
                        "conv5_1": 256, "fc6_1": 4096, "fc7_1": 4096, "fc8_1": 1000}
    # Table 4's halvings: Y_{1,k} 48, Y_{10,k} 192, Y_{15,k} 128, Y_{20,k} 2048, Y_{28,k} 500.
    assert [channels[n] // 2 for n in ("conv1_1", "conv3_1", "conv5_1", "fc6_1", "fc8_1")] == [
        48, 192, 128, 2048, 500]
    assert split_channels(models["vgg16"])["vgg0_dense0_fwd"] == 4096


def test_gemm_without_weights_is_not_splittable():
    g = OnnxGraph("attention")
    a, b = g.input("a", (2, 3)), g.input("b", (3, 4))
    scores = g.node("Gemm", [a, b], (2, 4), name="scores")
    y = g.gemm(g.gemm(scores, 5, name="fc"), 6, trans_b=False, name="fc_nt")
    model = g.model(y)
    assert splittable(model) == {"scores": False, "fc": True, "fc_nt": True}
    assert split_channels(model) == {"fc": 5, "fc_nt": 6}


def test_unnamed_nodes_take_their_first_output_name():
    assert node_name(helper.make_node("Relu", ["x"], ["y"])) == "y"
    assert node_name(helper.make_node("Relu", ["x"], ["y"], name="relu")) == "relu"


# -- registry and bad input -------------------------------------------------------------------
def test_registered_generators():
    counts = {"alexnet-onnx": 24, "vgg16-onnx": 41, "densenet121-onnx": 910}
    for name, nodes in counts.items():
        assert len(generated()[name]().graph.node) == nodes


@pytest.mark.parametrize("call, message", [
    (lambda: vgg(13), "depth=13: allowed: 16, 19"),
    (lambda: alexnet(groups=4), "groups=4: allowed: 2"),
    (lambda: splittable(alexnet(), ("Relu",)), "'Relu' is not allowed; allowed"),
    (lambda: splittable(alexnet(), ()), "'none given' is not allowed"),
])
def test_bad_input_is_one_clear_line(call, message):
    with pytest.raises(HetsimError, match=message) as info:
        call()
    assert "\n" not in str(info.value)
