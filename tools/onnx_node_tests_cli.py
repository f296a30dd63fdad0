#!/usr/bin/python3
"""ONNX backend node tests run the way a user runs them: through `kuiper run`.

For every test in Debian's libonnx-testdata (data/node/*/), the inputs of
test_data_set_0 are written as .npy files with their full ONNX shapes, and

    kuiper run model.onnx input_0.npy ... --expect output_0.npy ... --tolerance T

runs it. Exit 0 is a pass; the CLI's own comparison decides (max abs diff <=
T x max(1, max|ref|)). No shape is adapted and the script binds nothing itself.

Load-time inputs: many node tests pass weights, shapes or scales as graph
inputs (a Conv's W, a Reshape's shape, a Slice's starts, Resize's sizes, Clip's
min/max). The engine fixes shapes and weights when it builds the graph, so
`kuiper run` gives its arrays to the ONNX importer, which binds exactly the
graph inputs that an operator needs as a constant (OnnxImportOptions in
onnx/include/kuiper/onnx_import.hpp) from their arrays and specialises the
graph for those values; it prints one line naming them. Every other input is
fed at run time. A model run this way is checked for the given values only.
Integer and bool arrays travel as float32 and must hold values within +-2^24.
The in-tree test (onnx/test/test_conformance.cpp) goes through the same import
and feed path, so both report the same pass count.

    /usr/bin/python3 tools/onnx_node_tests_cli.py --kuiper build/solutions/bin/kuiper \
        --table build/solutions/onnx_node_tests_cli.md

A test counts as "of the supported operator set" when every node's type is a
type the importer registers a lowering for (`kuiper ops`),
the same rule the in-tree test uses. The script prints both counts: over that
set and over all tests.
"""
import argparse
import concurrent.futures
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

NODE_TESTS = "/usr/share/libonnx-testdata/data/node"
HERE = os.path.dirname(os.path.abspath(__file__))
# np.save writes these; LoadNpy reads them (kuiper/include/kuiper/npy.hpp):
# integers and bools as float32, exact within +-2^24.
NPY_DTYPES = {np.float32, np.float64, np.int8, np.int16, np.int32, np.int64, np.uint8,
              np.uint16, np.uint32, np.uint64, np.bool_}


def supported_operators(kuiper):
    """The ONNX op types the importer registers, as `kuiper ops` lists them."""
    listing = subprocess.run([kuiper, "ops"], capture_output=True, text=True, check=True).stdout
    onnx_part = listing.split("ONNX operators", 1)[1].splitlines()[1:]
    return {line.split()[0] for line in onnx_part if line.strip()}


def read_tensor(path):
    tensor = onnx.TensorProto()
    with open(path, "rb") as f:
        tensor.ParseFromString(f.read())
    return numpy_helper.to_array(tensor)


def one_line(text, limit=160):
    text = " ".join(text.replace("|", " ").split())
    return text if len(text) <= limit else text[:limit] + "..."


def run_test(kuiper, directory, supported, tolerance, timeout):
    name = os.path.basename(directory)
    model = onnx.load(os.path.join(directory, "model.onnx"), load_external_data=False)
    ops = sorted({node.op_type for node in model.graph.node})
    row = {"test": name, "ops": ",".join(ops), "supported": set(ops) <= supported}
    data = os.path.join(directory, "test_data_set_0")
    inputs = sorted(f for f in os.listdir(data) if f.startswith("input_"))
    outputs = sorted(f for f in os.listdir(data) if f.startswith("output_"))
    key = lambda f: int(re.search(r"_(\d+)\.pb$", f).group(1))
    inputs.sort(key=key)
    outputs.sort(key=key)
    with tempfile.TemporaryDirectory(prefix="kuiper_node_") as tmp:
        args = [kuiper, "run", os.path.join(directory, "model.onnx")]
        expect = []
        for kind, files, target in (("input", inputs, args), ("output", outputs, expect)):
            for f in files:
                try:
                    array = read_tensor(os.path.join(data, f))
                except Exception as e:  # sequences, optionals: not a tensor
                    row.update(status="not run", detail=f"{f} is not a tensor ({one_line(str(e), 60)})")
                    return row
                if array.dtype.type not in NPY_DTYPES:
                    row.update(status="not run", detail=f"{f} has dtype {array.dtype}")
                    return row
                path = os.path.join(tmp, f.replace(".pb", ".npy"))
                np.save(path, array)
                target.append(path)
        if not inputs:
            row.update(status="not run", detail="no inputs")
            return row
        # One --expect per output: a list after one flag would swallow nothing
        # past the first and leave the rest to the INPUT positional.
        for path in expect:
            args += ["--expect", path]
        args += ["--tolerance", str(tolerance)]
        try:
            proc = subprocess.run(args, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            row.update(status="timeout", detail=f"> {timeout} s")
            return row
    message = one_line(proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else "")
    if proc.returncode == 0:
        row.update(status="pass", detail="")
    elif proc.returncode == 3 or "differs from" in message:  # kuiper run: 3 = beyond tolerance
        row.update(status="mismatch", detail=message)
    elif proc.returncode in (1, 2):
        row.update(status="error", detail=message)
    else:
        row.update(status="crash", detail=f"exit {proc.returncode}: {message}")
    return row


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kuiper", default=os.path.join(HERE, "..", "build", "solutions", "bin", "kuiper"))
    parser.add_argument("--tests", default=NODE_TESTS)
    parser.add_argument("--table", help="write a Markdown table of every test here")
    parser.add_argument("--tolerance", type=float, default=1e-5)
    parser.add_argument("--timeout", type=float, default=60)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--supported-only", action="store_true",
                        help="run only the tests of the supported operator set")
    parser.add_argument("-k", default="", help="only tests whose name contains this")
    args = parser.parse_args()
    supported = supported_operators(args.kuiper)
    dirs = sorted(os.path.join(args.tests, d) for d in os.listdir(args.tests)
                  if args.k in d and os.path.exists(os.path.join(args.tests, d, "model.onnx")))
    rows = []
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        futures = []
        for d in dirs:
            if args.supported_only:
                ops = {n.op_type for n in onnx.load(os.path.join(d, "model.onnx")).graph.node}
                if not ops <= supported:
                    continue
            futures.append(pool.submit(run_test, args.kuiper, d, supported, args.tolerance, args.timeout))
        rows = [f.result() for f in futures]

    def totals(selected):
        counts = {}
        for r in selected:
            counts[r["status"]] = counts.get(r["status"], 0) + 1
        return counts

    sup = [r for r in rows if r["supported"]]
    summary = (f"supported operator set: {totals(sup).get('pass', 0)} of {len(sup)} pass "
               f"{dict(sorted(totals(sup).items()))}\n"
               f"all tests: {totals(rows).get('pass', 0)} of {len(rows)} pass "
               f"{dict(sorted(totals(rows).items()))}\n")
    print(summary, end="")
    if args.table:
        with open(args.table, "w") as f:
            f.write("# ONNX node tests through `kuiper run`\n\n" + summary.replace("\n", "  \n") + "\n")
            f.write("| test | operators | supported set | status | note |\n|---|---|---|---|---|\n")
            for r in rows:
                f.write(f"| {r['test']} | {r['ops']} | {'yes' if r['supported'] else 'no'} | "
                        f"{r['status']} | {r['detail']} |\n")
    return 0 if not any(r["status"] in ("crash", "timeout") for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
