#!/usr/bin/env python3
"""Write the binary and JSON files of tests/malformed/onnx/ and tests/malformed/profiles/.

    python tests/malformed/make_import_corpus.py

Each directory's EXPECT.yaml says, per file, the fragment the one-line error must contain (and,
for profiles, the model the profile is imported with).
"""

from __future__ import annotations

import json
from pathlib import Path

import onnx
from onnx import helper

from hetsim.workload.onnx_graph import OnnxGraph

HERE = Path(__file__).resolve().parent


def tiny(name: str = "tiny") -> onnx.ModelProto:
    g = OnnxGraph(name)
    x = g.input("x", (1, 3, 8, 8))
    return g.model(g.relu(g.conv(x, 4, 3, pad=1, name="conv"), name="relu"))


def main() -> None:
    onnx_dir, prof_dir = HERE / "onnx", HERE / "profiles"
    (onnx_dir / "01_not_onnx.onnx").write_text("name,kind\nconv1,conv\n")
    data = tiny().SerializeToString()
    (onnx_dir / "02_truncated.onnx").write_bytes(data[: len(data) // 2])
    g = OnnxGraph("custom")
    x = g.input("x", (1, 4, 8, 8))
    model = g.model(g.node("FancyAttention", [x], (1, 4, 8, 8), name="attn", domain="my.ops"))
    model.opset_import.append(helper.make_opsetid("my.ops", 1))
    (onnx_dir / "03_unknown_op.onnx").write_bytes(model.SerializeToString())
    model = tiny()
    model.graph.input[0].type.tensor_type.shape.dim[0].dim_param = "batch"
    (onnx_dir / "04_symbolic_batch.onnx").write_bytes(model.SerializeToString())

    (prof_dir / "model.onnx").write_bytes(tiny().SerializeToString())
    node = {"cat": "Node", "pid": 1, "tid": 1, "ph": "X", "ts": 10, "dur": 50,
            "name": "conv_kernel_time",
            "args": {"op_name": "Conv", "provider": "CPUExecutionProvider", "node_index": "0",
                     "activation_size": "768", "parameter_size": "448", "output_size": "1024",
                     "output_type_shape": [{"float": [1, 4, 8, 8]}]}}
    ghost = dict(node, name="ghost_kernel_time", ts=70)
    run = {"cat": "Session", "name": "model_run", "ph": "X", "ts": 5, "dur": 100}
    (prof_dir / "01_not_ort.json").write_text(json.dumps(
        {"traceEvents": [{"name": "forward", "ph": "X", "cat": "cpu_op", "ts": 1, "dur": 5}]}))
    text = json.dumps([node, run], indent=1)
    (prof_dir / "02_truncated.json").write_text(text[: len(text) * 2 // 3])
    (prof_dir / "03_node_not_in_model.json").write_text(json.dumps([node, ghost, run]))
    (prof_dir / "04_list_of_numbers.json").write_text("[1, 2, 3]\n")
    # Issue 29: values written into costs.csv, or crashes of the reader (one file each).
    relu = dict(node, name="relu_kernel_time", ts=61, dur=20,
                args=dict(node["args"], op_name="Relu", parameter_size="0"))
    runs = [{"cat": "Session", "name": "model_run", "ph": "X", "ts": 5 + 100 * k, "dur": 90} for k in range(2)]
    good = [dict(node, ts=10), dict(relu, ts=61), runs[0], dict(node, ts=110), dict(relu, ts=161), runs[1]]

    def mutated(i: int, key: str, value, args: bool = False) -> str:
        events = json.loads(json.dumps(good))
        target = events[i]["args"] if args else events[i]
        target[key] = value
        return json.dumps(events)

    raw = {  # file -> text (NaN and infinities are written as Python writes them: no JSON has them)
        "05_dur_negative.json": mutated(0, "dur", -50),
        "06_dur_nan.json": mutated(0, "dur", float("nan")),
        "07_dur_infinity.json": mutated(0, "dur", float("inf")),
        "08_dur_boolean.json": mutated(0, "dur", True),
        "09_dur_1e300.json": mutated(0, "dur", 1e300),
        "10_dur_string.json": mutated(0, "dur", "50"),
        "11_ts_null.json": mutated(0, "ts", None),
        "12_ts_nan.json": mutated(0, "ts", float("nan")),
        "13_run_dur_negative.json": mutated(2, "dur", -90),
        "14_run_ts_list.json": mutated(2, "ts", [5]),
        "15_size_negative.json": mutated(0, "output_size", "-1024", args=True),
        "16_nested_100000.json": "[" * 100_000 + "]" * 100_000,
        "17_duplicate_key.json": json.dumps(good).replace('"dur": 50,', '"dur": 50, "dur": 5,', 1),
    }
    for name, text in raw.items():
        (prof_dir / name).write_text(text)
    # Issue 29: two nodes writing one tensor (not SSA) imported with one producer dropped.
    model = tiny()
    model.graph.node[1].output[0] = model.graph.node[0].output[0]
    (onnx_dir / "09_not_ssa.onnx").write_bytes(model.SerializeToString())
    model = tiny()
    model.graph.node[1].output[0] = model.graph.input[0].name
    (onnx_dir / "10_writes_graph_input.onnx").write_bytes(model.SerializeToString())
    # calibrate host --from's malformed measurements: hetsim_host/tests/malformed_measurements/

if __name__ == "__main__":
    main()
