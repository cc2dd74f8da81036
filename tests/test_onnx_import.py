"""ONNX import and export: real ONNX models built with onnx.helper (through the zoo's OnnxGraph),
imported, and checked op by op against hand-computed counts; the shipped CNNs round-trip."""

from __future__ import annotations

import math

import onnx
import pytest
import yaml
from onnx import TensorProto, helper

from hetsim.errors import HetsimError
from hetsim.workload import load_workload, workload_from_dict
from hetsim.workload.build import workload_yaml
from hetsim.workload.onnx_export import workload_to_onnx
from hetsim.workload.onnx_graph import OnnxGraph
from hetsim.workload.onnx_import import count_node, import_onnx, parse_layers


def _key(op):
    return (op.name, str(op.kind), op.in_shape, op.out_shape, op.layer, op.starts_layer, op.macs,
            op.flops, op.input_bytes, op.output_bytes, op.weight_bytes, op.im2col_bytes, op.gemm,
            op.gemm_groups, op.weight_hint)


# -- a ResNet-style block with a skip --------------------------------------------------------
def resnet_block() -> onnx.ModelProto:
    g = OnnxGraph("resblock")
    x = g.input("x", (1, 3, 16, 16))
    stem = g.relu(g.conv(x, 8, 3, pad=1, name="stem"), name="stem_relu")
    y = g.relu(g.batch_norm(g.conv(stem, 8, 3, pad=1, bias=False, name="c1"), name="bn1"),
               name="r1")
    y = g.batch_norm(g.conv(y, 8, 3, pad=1, bias=False, name="c2"), name="bn2")
    y = g.relu(g.add(y, stem, name="skip"), name="out")
    return g.model(y)


def test_resnet_block_counts_by_hand():
    r = import_onnx(resnet_block())
    w = r.workload
    assert [str(op.kind) for op in w.ops] == ["conv", "relu", "conv", "bn", "relu", "conv", "bn",
                                             "add", "relu"]
    assert w.num_layers == 3 and [lay.name for lay in w.layers] == ["stem", "c1", "c2"]
    stem, c1, skip = w.op("stem"), w.op("c1"), w.op("skip")
    # stem: 16x16 outputs x (3*3*3) x 8 filters
    assert stem.gemm == (256, 27, 8) and stem.macs == 256 * 27 * 8 and stem.flops == 2 * stem.macs
    assert stem.input_bytes == 3 * 256 * 4 and stem.output_bytes == 8 * 256 * 4
    assert stem.weight_bytes == (8 * 3 * 9 + 8) * 4  # filters + bias, from the initializers
    # c1 has no bias: the initializers give 8*8*9 floats, one less bias than the CNN formula
    assert c1.macs == 256 * 72 * 8 and c1.weight_bytes == 8 * 8 * 9 * 4
    assert c1.im2col_bytes == 256 * 72 * 4
    assert w.op("bn1").weight_bytes == 4 * 8 * 4 and w.op("bn1").flops == 8 * 256
    assert skip.inputs == ("bn2", "stem_relu") and skip.flops == 8 * 256
    assert skip.input_bytes == 2 * 8 * 256 * 4
    # the skip crosses both cuts: a cut after layer 2 carries r1 and the stem's output
    assert w.cut_bytes(1) == 8 * 256 * 4 and w.cut_bytes(2) == 2 * 8 * 256 * 4
    assert r.report.by_kind == {"conv": 3, "relu": 3, "bn": 2, "add": 1}


def test_native_counts_equal_the_generic_counting():
    """The CNN-kind op of a node has the counts count_node gives the same node."""
    w = import_onnx(resnet_block()).workload
    c = count_node("Conv", {"group": 1}, [(1, 8, 16, 16), (8, 8, 3, 3)], [(1, 8, 16, 16)])
    assert (c.kind, c.gemm, c.gemm_groups, c.macs, c.flops) == \
        ("conv", w.op("c1").gemm, 1, w.op("c1").macs, w.op("c1").flops)


# -- a depthwise block -------------------------------------------------------------------------
def test_depthwise_block():
    g = OnnxGraph("dwblock")
    x = g.input("x", (1, 16, 16, 16))
    y = g.conv(x, 16, 3, stride=2, pad=(0, 0, 1, 1), groups=16, name="dw")
    y = g.unary("Clip", y, name="relu6", min=0.0, max=6.0)  # ReLU6, Clip-11 style attributes
    y = g.conv(y, 32, 1, name="pw")
    w = import_onnx(g.model(y)).workload
    dw, pw = w.op("dw"), w.op("pw")
    assert str(dw.kind) == "dw" and dw.pad == (0, 1) and dw.stride == 2
    assert dw.out_shape.h == 8 and dw.gemm == (64, 9, 16) and dw.macs == 64 * 9 * 16
    assert dw.weight_bytes == (16 * 9 + 16) * 4
    assert str(w.op("relu6").kind) == "relu" and w.op("relu6").op_type == "Clip"
    assert pw.gemm == (64, 16, 32) and w.num_layers == 2


def test_dilated_and_grouped_convs_stay_native_asymmetric_ones_do_not():
    g = OnnxGraph("convs")
    x = g.input("x", (1, 8, 20, 20))
    a = g.conv(x, 8, 3, pad=2, dilation=2, name="dil")
    b = g.conv(a, 16, 3, pad=1, groups=2, name="grp")
    c = g.conv(b, 16, 3, pad=(1, 0, 1, 0), name="asym")  # pads differ between H and W
    r = import_onnx(g.model(c))
    w = r.workload
    assert w.op("dil").dilation == 2 and w.op("dil").out_shape.h == 20
    assert w.op("dil").macs == 400 * 72 * 8
    assert w.op("grp").groups == 2 and w.op("grp").gemm == (400, 36, 8)
    asym = w.op("asym")
    assert asym.explicit and str(asym.kind) == "conv" and asym.dims == (1, 16, 20, 18)
    assert asym.gemm == (360, 144, 16) and asym.macs == 360 * 144 * 16
    assert ("asym", "pads [1, 0, 1, 0] differ between the axes") in r.report.generic_cnn


def test_fused_conv_is_conv_plus_its_activation():
    g = OnnxGraph("fused")
    x = g.input("x", (1, 4, 8, 8))
    wt, b = g.weight("f.weight", (8, 4, 3, 3)), g.weight("f.bias", (8,))
    y = g.node("FusedConv", [x, wt, b], (1, 8, 8, 8), name="f", domain="com.microsoft",
               kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[1, 1], activation="Relu")
    model = g.model(y)
    model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    op = import_onnx(model).workload.op("f")
    assert str(op.kind) == "conv" and op.op_type == "FusedConv"
    assert op.macs == 64 * 36 * 8 and op.flops == 2 * op.macs + 8 * 64


# -- a transformer encoder layer (an unfused ONNX Runtime graph) ----------------------------
S, D, HEADS = 8, 32, 4
DH = D // HEADS


def encoder_layer() -> onnx.ModelProto:
    g = OnnxGraph("encoder")
    x = g.input("x", (1, S, D))

    def dense(t, n, name):
        return g.add(g.linear(t, n, name=name), g.weight(f"{name}.bias", (n,)), name=f"{name}.add")

    def heads(t, name):
        # the exporters' dynamic reshape: Shape -> Gather -> Unsqueeze -> Concat -> Reshape
        shape = g.node("Shape", [t], (3,), name=f"{name}.shape", dtype="int64")
        batch = g.node("Gather", [shape, g.const(f"{name}.i0", 0)], (), name=f"{name}.batch",
                       dtype="int64", axis=0)
        batch = g.node("Unsqueeze", [batch, g.const(f"{name}.ax", [0])], (1,),
                       name=f"{name}.unsq", dtype="int64")
        target = g.concat([batch, g.const(f"{name}.rest", [S, HEADS, DH])], axis=0,
                          name=f"{name}.target")
        t = g.node("Reshape", [t, target], (1, S, HEADS, DH), name=f"{name}.reshape")
        return g.transpose(t, [0, 2, 1, 3], name=f"{name}.t")

    q, k, v = (heads(dense(x, D, n), n) for n in ("q", "k", "v"))
    kt = g.transpose(k, [0, 1, 3, 2], name="kt")
    s = g.binary("Div", g.matmul(q, kt, name="qk"), g.const("scale", [math.sqrt(DH)], "float32"),
                 name="scaled")
    ctx = g.matmul(g.softmax(s, name="probs"), v, name="ctx")
    ctx = g.reshape(g.transpose(ctx, [0, 2, 1, 3], name="ctx.t"), [1, S, D], name="merge")
    h = g.add(dense(ctx, D, "o"), x, name="res1")
    h = g.node("LayerNormalization", [h, g.weight("ln1.g", (D,)), g.weight("ln1.b", (D,))],
               (1, S, D), name="ln1", axis=-1)
    f = dense(h, 4 * D, "ff1")
    f = g.binary("Mul", f, g.unary("Erf", f, name="erf"), name="gelu")
    f = dense(f, D, "ff2")
    y = g.reduce_mean(g.add(f, h, name="res2"), [-1], name="mean")
    return g.model(y)


def test_transformer_encoder_layer():
    r = import_onnx(encoder_layer())
    w = r.workload
    kinds = [str(op.kind) for op in w.ops]
    assert kinds.count("matmul") == 8  # q, k, v, QK^T, PV, o, ff1, ff2
    assert w.inputs["x"].dims == (1, S, D) and w.num_layers == 8
    q, qk, ctx, ff1 = w.op("q"), w.op("qk"), w.op("ctx"), w.op("ff1")
    assert q.gemm == (S, D, D) and q.gemm_groups == 1 and q.macs == S * D * D
    assert q.weight_bytes == D * D * 4 and q.input_bytes == S * D * 4
    assert qk.gemm == (S, DH, S) and qk.gemm_groups == HEADS and qk.macs == HEADS * S * DH * S
    assert qk.weight_bytes == 0 and qk.input_bytes == 2 * S * D * 4  # two activations
    assert ctx.gemm == (S, S, DH) and ctx.flops == 2 * HEADS * S * S * DH
    assert ff1.gemm == (S, D, 4 * D) and w.op("ff1.add").weight_bytes == 4 * D * 4
    # the dynamic reshape chain: metadata and int64 copies, all tiny
    assert str(w.op("q.shape").kind) == "shape" and w.op("q.shape").input_bytes == 0
    assert w.op("q.shape").output_bytes == 3 * 8  # int64
    assert str(w.op("q.batch").kind) == "gather" and str(w.op("q.target").kind) == "concat"
    reshape = w.op("q.reshape")
    assert str(reshape.kind) == "reshape" and reshape.dims == (1, S, HEADS, DH)
    assert set(reshape.inputs) == {"q.add", "q.target"}
    assert str(w.op("scaled").kind) == "binary" and w.op("scaled").flops == HEADS * S * S
    assert str(w.op("erf").kind) == "unary" and w.op("erf").flops == S * 4 * D
    ln = w.op("ln1")
    assert str(ln.kind) == "layernorm" and ln.weight_bytes == 2 * D * 4 and ln.flops == S * D
    mean = w.op("mean")
    assert str(mean.kind) == "reduce" and mean.flops == S * D and mean.dims == (1, S, 1)
    assert w.op("res1").net_inputs == ("x",)  # reads the graph input beside an op
    assert w.cut_bytes(1) > 0


# -- an LSTM-like gate block, and the LSTM node itself ---------------------------------------
def test_lstm_gate_block():
    IN, HID = 16, 8
    g = OnnxGraph("gates")
    x = g.input("x", (1, IN))
    h0 = g.input("h0", (1, HID))
    c0 = g.input("c0", (1, HID))
    z = g.add(g.add(g.linear(x, 4 * HID, name="wx"), g.linear(h0, 4 * HID, name="wh"),
                    name="xh"), g.weight("b", (4 * HID,)), name="bias")
    i, f, gg, o = g.split(z, [HID] * 4, axis=1, name="gates")
    i, f, o = (g.unary("Sigmoid", t, name=n) for t, n in ((i, "i"), (f, "f"), (o, "o")))
    gg = g.unary("Tanh", gg, name="g")
    c = g.add(g.binary("Mul", f, c0, name="fc"), g.binary("Mul", i, gg, name="ig"), name="c")
    h = g.binary("Mul", o, g.unary("Tanh", c, name="tc"), name="h")
    w = import_onnx(g.model(h, c)).workload
    # a [1, K] vector times constant weights is a fully connected layer (a GEMV at batch 1)
    assert [str(op.kind) for op in w.ops].count("fc") == 2
    assert w.op("wx").gemm == (1, IN, 4 * HID) and w.op("wh").gemm == (1, HID, 4 * HID)
    assert w.op("wx").weight_bytes == IN * 4 * HID * 4  # no bias in a MatMul
    split = w.op("gates")
    assert str(split.kind) == "split" and split.out_dims == ((1, HID),) * 4
    assert split.output_bytes == 4 * HID * 4 and split.flops == 0
    assert w.op("i").flops == HID and str(w.op("g").kind) == "unary"
    assert str(w.op("fc").kind) == "binary" and w.op("fc").net_inputs == ("c0",)
    assert str(w.op("c").kind) == "add" and w.op("c").flops == HID
    assert set(w.inputs) == {"x", "h0", "c0"}


def test_lstm_node():
    SEQ, IN, HID = 5, 16, 8
    g = OnnxGraph("lstm")
    x = g.input("x", (SEQ, 1, IN))
    ws = [g.weight("W", (1, 4 * HID, IN)), g.weight("R", (1, 4 * HID, HID)),
          g.weight("B", (1, 8 * HID))]
    y = g.node("LSTM", [x, *ws], [(SEQ, 1, 1, HID), (1, 1, HID), (1, 1, HID)], name="lstm",
               n_outputs=3, hidden_size=HID)
    op = import_onnx(g.model(y)).workload.op("lstm")
    assert str(op.kind) == "matmul" and op.gemm == (1, IN + HID, 4 * HID) and op.gemm_groups == SEQ
    assert op.macs == SEQ * (IN + HID) * 4 * HID
    assert op.flops == 2 * op.macs + SEQ * HID * 17
    assert op.weight_bytes == (4 * HID * IN + 4 * HID * HID + 8 * HID) * 4
    assert op.output_bytes == (SEQ * HID + 2 * HID) * 4


# -- round trips -----------------------------------------------------------------------------
def test_shipped_cnn_round_trips_exactly():
    """yolov3 written out as ONNX imports to the shipped workload: every op, layer and cut."""
    shipped = load_workload("yolov3")
    imported = import_onnx(workload_to_onnx(shipped), "yolov3").workload
    assert [_key(op) for op in imported.ops] == [_key(op) for op in shipped.ops]
    assert (imported.cut_bytes_array() == shipped.cut_bytes_array()).all()
    assert imported.summary().equals(shipped.summary())


def test_shipped_cnn_with_fc_round_trips_but_for_the_flatten():
    """ONNX's Gemm needs a 2-D input: resnet50's fc gets a Flatten (a view) in front."""
    shipped = load_workload("resnet50")
    imported = import_onnx(workload_to_onnx(shipped), "resnet50").workload
    extra = {op.name for op in imported.ops} - {op.name for op in shipped.ops}
    assert extra == {"logits/flatten"}
    by_name = {op.name: op for op in imported.ops}
    for op in shipped.ops:
        if op.name != "logits":
            assert _key(by_name[op.name]) == _key(op)
    assert (imported.cut_bytes_array() == shipped.cut_bytes_array()).all()
    assert (imported.layer_macs() == shipped.layer_macs()).all()
    assert [lay.weight_bytes for lay in imported.layers] == [lay.weight_bytes for lay in shipped.layers]


def test_imported_yaml_round_trips_through_the_loader():
    for model in (encoder_layer(), resnet_block()):
        r = import_onnx(model)
        again = workload_from_dict(yaml.safe_load(workload_yaml(r.spec)), "again.yaml")
        assert [_key(op) for op in again.ops] == [_key(op) for op in r.workload.ops]
        assert [op.op_type for op in again.ops] == [op.op_type for op in r.workload.ops]
        assert (again.cut_bytes_array() == r.workload.cut_bytes_array()).all()


def test_export_refuses_what_onnx_cannot_say():
    with pytest.raises(HetsimError, match="group 1 of a 2-way conv"):
        workload_to_onnx(load_workload("alexnet"))
    with pytest.raises(HetsimError, match="single H×W×C image input"):
        workload_to_onnx(import_onnx(encoder_layer()).workload)
    g = OnnxGraph("img")
    x = g.input("x", (1, 4, 8, 8))
    generic = import_onnx(g.model(g.unary("Sigmoid", x, name="s"))).workload
    with pytest.raises(HetsimError, match="op s: a generic op"):
        workload_to_onnx(generic)


# -- layers, shapes, unknown ops, weights ---------------------------------------------------
def test_layer_specs():
    m = resnet_block()
    by_type = import_onnx(m, layers="Conv,Add").workload
    assert [lay.name for lay in by_type.layers] == ["stem", "c1", "c2", "skip"]
    by_name = import_onnx(m, layers="re:^c[12]$").workload
    assert [lay.name for lay in by_name.layers] == ["c1", "c2"]
    with pytest.raises(HetsimError, match="--layers 'bogus'"):
        parse_layers("bogus")


def test_symbolic_dims_need_an_input_shape():
    g = OnnxGraph("dyn")
    x = g.input("x", (1, 3, 8, 8))
    model = g.model(g.relu(g.conv(x, 4, 3, pad=1)))
    model.graph.input[0].type.tensor_type.shape.dim[0].dim_param = "batch"
    with pytest.raises(HetsimError, match=r"symbolic dims batch; give --input-shape x=Nx3x8x8"):
        import_onnx(model)
    w = import_onnx(model, input_shapes={"x": (1, 3, 8, 8)}).workload
    assert w.input_shape.c == 3 and w.ops[0].macs == 64 * 27 * 4


def test_unknown_op_is_an_error_or_a_memory_bound_op():
    g = OnnxGraph("odd")
    x = g.input("x", (1, 4, 8, 8))
    y = g.node("FancyNorm", [g.relu(x, name="r")], (1, 4, 8, 8), name="fancy", domain="my.ops")
    model = g.model(y)
    model.opset_import.append(helper.make_opsetid("my.ops", 1))
    with pytest.raises(HetsimError, match=r"node fancy: op type 'FancyNorm' \(domain my.ops\)"):
        import_onnx(model)
    r = import_onnx(model, allow_unknown=True)
    op = r.workload.op("fancy")
    assert str(op.kind) == "other" and op.flops == 0 and op.macs == 0
    assert op.input_bytes == op.output_bytes == 4 * 64 * 4
    assert r.report.unknown == [("fancy", "FancyNorm")]
    assert any("FancyNorm" in line for line in r.report.lines())


def test_weights_come_from_initializer_dims_without_data():
    model = workload_to_onnx(load_workload("synth1"))  # external data that does not exist
    assert all(t.data_location == TensorProto.EXTERNAL for t in model.graph.initializer)
    w = import_onnx(model, "synth1").workload
    assert w.total_macs == load_workload("synth1").total_macs
    assert sum(op.weight_bytes for op in w.ops) == sum(op.weight_bytes
                                                       for op in load_workload("synth1").ops)


def test_constants_are_not_ops():
    g = OnnxGraph("consts")
    x = g.input("x", (1, 4))
    two = g.const("two", [2.0], "float32")
    four = g.binary("Mul", two, two, name="four")  # reads only constants: folded
    y = g.binary("Mul", x, four, name="y")
    r = import_onnx(g.model(y))
    assert [op.name for op in r.workload.ops] == ["y"] and r.report.folded == ["four"]


def test_readme_import_output_is_current(tmp_path, capsys, monkeypatch):
    """README's "Your own model" shows real output of `hetsim workloads import`."""
    from pathlib import Path

    from hetsim.cli import main

    readme = (Path(__file__).parent.parent / "README.md").read_text()
    monkeypatch.chdir(tmp_path)
    main(["workloads", "export", "mobilenet", "--weights", "random", "--out", "mobilenet.onnx"])
    capsys.readouterr()
    main(["workloads", "import", "mobilenet.onnx", "--out", "my-mobilenet.yaml"])
    for line in capsys.readouterr().out.splitlines():
        assert line.strip() in readme, f"README's import output is stale; now: {line}"
    assert load_workload(tmp_path / "my-mobilenet.yaml").num_layers == 28
