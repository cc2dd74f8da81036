#!/usr/bin/env python3
"""Write the files of the robustness corpus: every bug the fuzzing harness (tests/fuzzing.py) or
the issue found in input files, as a file with its expected one-line error.

    python tests/malformed/make_robustness_corpus.py

Text files go to platforms/, workloads/ and mappings/ (first line ``# expect: ...``, read by the
corpus tests of those folders); files that cannot carry a comment (binary, other encodings,
aliases and numbers too big to show) go to files/ with their expectations in files/EXPECT.yaml.
Command-line bugs are in cli.yaml (hand-written).
"""

from __future__ import annotations

import os
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent

TINY = """schema: 2
name: tiny
memories:
  - {name: dram, bandwidth_GBps: BW}
core_types:
  - name: cpu
    macs_per_cycle: 2
    dvfs:
      - {name: max, freq_MHz: FREQ}
    roofline:
      parallel_efficiency: PAR
clusters:
  - {name: big, symbol: B, core_type: cpu, cores: CORES, memory: dram}
power: {static_W: STATIC}
"""
DEFAULTS = {"BW": "10", "FREQ": "1000", "PAR": "[1.0]", "CORES": "2", "STATIC": "0.5"}


def tiny(**values: str) -> str:
    text = TINY
    for key, default in DEFAULTS.items():
        text = text.replace(key, values.get(key, default))
    return text


#: platforms/<name>: (expected fragment, field path or "-", body)
PLATFORMS = {
    "25_duplicate_key.yaml": (
        "refused YAML at line 6, column 38: duplicate key 'bandwidth_GBps' (first at line 6)", "-",
        tiny(BW="10, bandwidth_GBps: 20")),
    "26_bandwidth_inf.yaml": (
        "memories.dram.bandwidth_GBps: must be a finite number in [1e-06, 1e+06] GB/s (got inf)",
        "memories.dram.bandwidth_GBps", tiny(BW=".inf")),
    "27_freq_1e308.yaml": (
        "core_types.cpu.dvfs.max.freq_MHz: must be a number in [0.001, 100000] MHz (got 1e+308)",
        "core_types.cpu.dvfs.max.freq_MHz", tiny(FREQ="1e308")),
    "28_freq_numeric_string.yaml": (
        "core_types.cpu.dvfs.max.freq_MHz: must be a number in [0.001, 100000] MHz, not a string",
        "core_types.cpu.dvfs.max.freq_MHz", tiny(FREQ="'1e3'")),
    "29_bandwidth_true.yaml": (
        "memories.dram.bandwidth_GBps: must be a number in [1e-06, 1e+06] GB/s, not a boolean (got True)",
        "memories.dram.bandwidth_GBps", tiny(BW="true")),
    "30_value_in_100_lists.yaml": (
        "refused YAML at line 16, column 117: nested deeper than 100 levels", "-",
        tiny(STATIC="[" * 100 + "0.5" + "]" * 100)),
    "31_value_in_3_lists.yaml": (
        "power.static_W: must be a number in [0, 100000] W", "power.static_W",
        tiny(STATIC="[[[0.5]]]")),
    "32_schema_true.yaml": (
        "schema: must be the integer 2 (files of version 1 are migrated on load) (got True)", "schema",
        tiny().replace("schema: 2", "schema: true")),
    "33_cores_fraction.yaml": (
        "clusters.big.cores: must be an integer in [1, 2147483647] (got 2.5)", "clusters.big.cores",
        tiny(CORES="2.5")),
    "34_efficiency_nan.yaml": (
        "core_types.cpu.roofline.parallel_efficiency.1: must be a finite number in [1e-06, 1] (got nan)",
        "core_types.cpu.roofline.parallel_efficiency.1", tiny(PAR="[1.0, .nan]")),
    "35_tiny_bandwidth.yaml": (
        "memories.dram.bandwidth_GBps: must be a number in [1e-06, 1e+06] GB/s (got 1e-300)",
        "memories.dram.bandwidth_GBps", tiny(BW="1e-300")),
    "36_huge_int_cores.yaml": (
        "clusters.big.cores: must be an integer in [1, 2147483647] (got 9223372036854775808)",
        "clusters.big.cores", tiny(CORES=str(2 ** 63))),
}

WORKLOAD = """schema: 1
name: NAME
input: {h: 8, w: 8, c: 3}
layer_kinds: [conv]
ops:
  - {name: conv1, kind: conv, kernel: 3, out_c: 8OPTS}
"""

#: workloads/<name>: (expected fragment, extra op fields)
WORKLOADS = {
    "19_count_2_63.yaml": ("ops.conv1.macs: must be an integer in [0, 9007199254740992] (got 9223372036854775808)",
                           f", macs: {2 ** 63}"),
    "20_duplicate_key.yaml": ("refused YAML at line 7, column 52: duplicate key 'kernel' (first at line 7)",
                              ", kernel: 5"),
    "21_shape_past_2_53.yaml": ("ops[0] (conv1): macs 3.32e+20 is past 2^53",
                                ", input_shape: {h: 2147483647, w: 2147483647, c: 1}"),
    "22_ceil_mode_string.yaml": ("ops.conv1.ceil_mode: Input should be a valid boolean", ", ceil_mode: 'yes'"),
}

MAPPINGS = {
    "08_duplicate_key.yaml": ("refused YAML at line 3, column 1: duplicate key 'pipeline' (first at line 2)",
                              "pipeline: B4:1-54\npipeline: s4:1-54\n"),
    "09_share_is_a_string.yaml": ("splits.conv1.B4: must be a number in [1e-06, 1], not a string",
                                  "placement: {}\ndefault: B4\nsplits: {conv1: {B4: '0.5', s4: 0.5}}\n"),
    "10_layer_past_int32.yaml": ("stages.0.layers.1: must be an integer in [1, 2147483647] (got 99999999999)",
                                 "stages:\n  - {ep: B4, layers: [1, 99999999999]}\n"),
}

#: files/<name>: (bytes, used as, expected fragment)
ONNX_LIKE = b"\x08\x07\x12\x07pytorch\x1a\x052.1.0:\x00\x00\x01\x02"


def _bomb() -> bytes:
    lines = ["a0: &a0 [" + ", ".join(["lol"] * 10) + "]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 9)]
    return ("\n".join(lines) + "\n").encode()


FILES = {
    "model.onnx": (ONNX_LIKE, "workload", "a binary file (a NUL byte at offset 19) (it looks like an ONNX "
                   "model: import it first (hetsim workloads import MODEL.onnx --out W.yaml))"),
    "random_bytes.yaml": (bytes(range(200, 256)) * 4, "platform", "not UTF-8 text (byte 0xc8 at offset 0)"),
    "latin1.yaml": (tiny().replace("name: tiny", "name: tiny\ndescription: café").encode("latin-1"),
                    "platform", "not UTF-8 text (byte 0xe9 at offset 37)"),
    "utf16_without_bom.yaml": (tiny().encode("utf-16-le"), "platform", "a binary file (a NUL byte at offset 1)"),
    "alias_bomb.yaml": (_bomb(), "platform", "aliases expand the document past 5,000,000 nodes (an alias "
                        "bomb?); refused before expanding it"),
    "recursive_alias.yaml": (b"schema: 2\nname: &n [x, *n]\n", "platform",
                             "alias *n refers to a collection it is inside of"),
    "digits_5000.yaml": (tiny(BW="9" * 5000).encode(), "platform", "a number of 5000 digits (at most 4300)"),
    "control_character.yaml": (tiny().replace("tiny", "ti\x01ny").encode(), "platform",
                               "character U+0001 at offset 18 is a control character YAML does not allow"),
    "nested_100000.yaml": (b"schema: " + b"[" * 100_000 + b"]" * 100_000 + b"\n", "platform",
                           "nested deeper than 100 levels"),
    "empty.yaml": (b"", "mapping", "the file is empty"),
    "truncated.yaml": (tiny().encode()[:57], "platform", "malformed YAML at line 4, column 27: expected ',' or '}', but got '<stream end>'"),
}


def main() -> None:
    for name, (expect, path, body) in PLATFORMS.items():
        (HERE / "platforms" / name).write_text(f"# expect: {expect}\n# path: {path}\n{body}")
    for name, (expect, opts) in WORKLOADS.items():
        body = WORKLOAD.replace("NAME", Path(name).stem).replace("OPTS", opts)
        (HERE / "workloads" / name).write_text(f"# expect: {expect}\n{body}")
    for name, (expect, body) in MAPPINGS.items():
        (HERE / "mappings" / name).write_text(f"# expect: {expect}\n{body}")
    folder = HERE / "files"
    folder.mkdir(exist_ok=True)
    expect = {}
    for name, (data, used_as, fragment) in FILES.items():
        (folder / name).write_bytes(data)
        expect[name] = {"as": used_as, "expect": fragment}
    header = ("# File -> how it is used (-p platform, -w workload, -m mapping of `hetsim simulate`) and the\n"
              "# fragment of the one-line error (exit 2). Written by tests/malformed/make_robustness_corpus.py.\n")
    (folder / "EXPECT.yaml").write_text(header + yaml.safe_dump(expect, sort_keys=True, width=200,
                                                                allow_unicode=True))


if __name__ == "__main__":
    os.chdir(HERE)
    main()
