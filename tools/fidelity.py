#!/usr/bin/python3
"""How close the engine, PyTorch float32, ONNX Runtime (and ncnn) come to float64, robustly.

    /usr/bin/python3 tools/fidelity.py [--models resnet18,yolov5s] [--kuiper [NAME=]PATH ...]
        [--peers torch,ort,ncnn[,ncnn23]] [--ncnn-bench PATH] [--models-dir build/models] [--inputs N]

For each model it takes the fixed input tools/make_models.py wrote
(<models-dir>/<name>/<name>.input.npy, batch 1), runs the seeded module of
models/ in float64 as the reference (as tools/fp64_reference.py does), and
measures against it:
- every engine build given (`kuiper run <name>.pnnx.param input -o out.npy`;
  default build/solutions/bin/kuiper; repeat --kuiper, NAME=PATH, for a before
  and an after);
- torch: the same module in float32, as written (BatchNorm not folded: the
  <name>.output.npy reference of the model checks is this);
- ort: ONNX Runtime (npm onnxruntime-node, CPU, every graph optimisation on,
  2 threads, the model tools/bench_vs_torch.py exports into build/ort);
- ncnn: when tools/ncnn_models.py has built its runner and models (see
  tools/bench_vs_torch.py for where they are looked up), fp32; ncnn23: the
  same with Winograd F(2x2, 3x3) only, as tools/bench_vs_torch.py says.

The relative error of one output value y against its float64 reference r is
    e = |y - r| / (|r| + floor_k),  floor_k = 1e-3 * max |r| over the values of its kind k.
The floor keeps values near zero, whose relative error means nothing, from
deciding the table: below a thousandth of the largest value of its kind an
error is measured against that thousandth. Kinds: ResNet18 has one (the 1000
logits); YOLOv5s's rows (x, y, w, h, objectness, 80 class scores) have three:
box centres (columns 0-1, pixels), box sizes (columns 2-3, pixels, up to
~1500) and scores (columns 4-84, in [0, 1]). Over all values of the output the
table gives the max of e, its root mean square and its 99.9th percentile
(numpy's linear interpolation), and beside them the max absolute error, the
bound the end-to-end tests have always used. YOLOv5s's max is decided by one
large box whose float32 rounding is a lottery; rms and p99.9 are the robust
measures.

One input is one draw of that lottery too: a runner whose rounding is close to
PyTorch's can land on either side of it on the fixed input. --inputs N measures
N more inputs (seeded as make_models.py seeds the fixed one, seeds 100 to
99 + N) and prints, per runner, the mean rms and p99.9 over them and on how
many of the N inputs each is above PyTorch float32's own.
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch

import bench_vs_torch as bvt
from bench_vs_torch import ROOT
from models import MODELS
from models.seeding import seeded_input

FIRST_EXTRA_SEED = 100  # --inputs: seeds 100, 101, ..; the fixed input's is make_models.py's

# Column ranges of each kind of value in a YOLOv5s output row.
YOLO_KINDS = {"box centre": slice(0, 2), "box size": slice(2, 4), "score": slice(4, None)}

# Runs an ONNX model once on raw float32 input and writes its first output as raw float32;
# run from build/ort, where tools/bench_vs_torch.py installs onnxruntime-node.
ORT_RUN_JS = r"""
const fs = require('fs');
const ort = require(require.resolve('onnxruntime-node', {paths: [process.cwd()]}));
const [model, input, shapeText, output] = process.argv.slice(-4);
(async () => {
  const session = await ort.InferenceSession.create(model, {
    executionProviders: ['cpu'], graphOptimizationLevel: 'all',
    intraOpNumThreads: 2, interOpNumThreads: 1});
  const bytes = fs.readFileSync(input);
  const data = new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);
  const shape = shapeText.split(',').map(Number);
  const feeds = {[session.inputNames[0]]: new ort.Tensor('float32', data, shape)};
  const result = await session.run(feeds);
  const out = result[session.outputNames[0]].data;
  fs.writeFileSync(output, Buffer.from(out.buffer, out.byteOffset, out.byteLength));
})().catch((error) => { console.error(error.message); process.exit(1); });
"""


def floors(name, ref):
    """floor_k of every value of `ref`, an array of its shape (see the docstring)."""
    floor = np.empty_like(ref)
    if name == "yolov5s":
        for columns in YOLO_KINDS.values():
            floor[..., columns] = 1e-3 * np.abs(ref[..., columns]).max()
    else:
        floor[...] = 1e-3 * np.abs(ref).max()
    return floor


def errors(name, out, ref):
    """(max abs, max rel, rms rel, p99.9 rel) of `out` against the float64 `ref`."""
    out = np.asarray(out, dtype=np.float64).reshape(ref.shape)
    diff = np.abs(out - ref)
    rel = diff / (np.abs(ref) + floors(name, ref))
    return diff.max(), rel.max(), np.sqrt(np.mean(rel ** 2)), np.percentile(rel, 99.9)


def run_checked(cmd, what, cwd=None):
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd)
    if proc.returncode != 0:
        sys.exit("fidelity: %s failed: %s\n%s" % (what, " ".join(cmd), proc.stderr.strip()))


def engine_output(kuiper, param, input_path, workdir):
    out = os.path.join(workdir, "engine.npy")
    run_checked([kuiper, "run", param, input_path, "-o", out], "kuiper run")
    return np.load(out)


def ort_output(name, module, x, workdir):
    onnx_path = bvt.ort_model(name, module, tuple(x.shape))
    raw_in, raw_out = os.path.join(workdir, "ort_in.f32"), os.path.join(workdir, "ort_out.f32")
    x.astype(np.float32).tofile(raw_in)
    run_checked(["node", "-e", ORT_RUN_JS, onnx_path, raw_in, ",".join(map(str, x.shape)),
                 raw_out], "ONNX Runtime", cwd=bvt.ORT_DIR)
    return np.fromfile(raw_out, dtype=np.float32)


NCNN_LABELS = {"ncnn": "ncnn fp32", "ncnn23": "ncnn fp32 F23"}  # bvt.NCNN_PEERS' rows


def ncnn_output(files, x, workdir, peer="ncnn"):
    raw_in, raw_out = os.path.join(workdir, "ncnn_in.f32"), os.path.join(workdir, "ncnn_out.f32")
    x.astype(np.float32).tofile(raw_in)
    bench, param, weights = files
    run_checked([bench, param, weights, ",".join(map(str, x.shape[1:])), "1", "0", "1",
                 "--input", raw_in, "--output", raw_out] + bvt.NCNN_PEERS[peer], "ncnn_bench")
    return np.fromfile(raw_out, dtype=np.float32)


def measure(name, module, x, input_path, param, builds, peers, ncnn, workdir):
    """[(runner, errors(...))] for the input x (saved at input_path) against float64."""
    with torch.no_grad():
        ref = module.double()(torch.from_numpy(x).double()).numpy()
        module.float()
        outputs = [(label, engine_output(path, param, input_path, workdir))
                   for label, path in builds]
        if "torch" in peers:
            outputs.append(("PyTorch f32", module(torch.from_numpy(x)).numpy()))
    if "ort" in peers:
        outputs.append(("ORT", ort_output(name, module, x, workdir)))
    for peer in (p for p in peers if ncnn and p in NCNN_LABELS):
        outputs.append((NCNN_LABELS[peer], ncnn_output(ncnn, x, workdir, peer)))
    return [(label, errors(name, out, ref)) for label, out in outputs], ref


def print_extra(name, per_input):
    """The --inputs table for one model: per_input is a list of measure() rows."""
    torch_rows = [dict(rows).get("PyTorch f32") for rows in per_input]
    for label in [label for label, _ in per_input[0]]:
        errs = np.array([dict(rows)[label] for rows in per_input])
        above = "%12s %12s" % ("", "")
        if all(torch_rows):
            ref = np.array(torch_rows)
            above = "%12d %12d" % ((errs[:, 2] > ref[:, 2]).sum(), (errs[:, 3] > ref[:, 3]).sum())
        print("%-9s %-14s %12.4g %12.4g %s" % (name, label, errs[:, 2].mean(), errs[:, 3].mean(),
                                                above))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default="resnet18,yolov5s")
    ap.add_argument("--kuiper", action="append", metavar="[NAME=]PATH",
                    help="an engine build to measure (repeat for before and after)")
    ap.add_argument("--peers", default="torch,ort,ncnn",
                    help="any of torch, ort, ncnn, ncnn23 (as tools/bench_vs_torch.py's)")
    ap.add_argument("--ncnn-bench", default=None, help="as tools/bench_vs_torch.py's")
    ap.add_argument("--models-dir", default=os.environ.get(
        "KUIPER_MODELS", os.path.join(ROOT, "build", "models")))
    ap.add_argument("--inputs", type=int, default=0,
                    help="N more seeded inputs: mean errors, and how often above PyTorch's")
    args = ap.parse_args()
    if args.inputs < 0:
        sys.exit("fidelity: --inputs takes a count, 0 or more")
    peers = [p for p in args.peers.split(",") if p]
    if set(peers) - {"torch", "ort"} - set(bvt.NCNN_PEERS):
        sys.exit("fidelity: --peers takes any of torch, ort, ncnn, ncnn23")
    builds = []
    for i, value in enumerate(args.kuiper or [os.path.join(ROOT, "build", "solutions", "bin",
                                                           "kuiper")]):
        label, sep, path = value.partition("=")
        if not sep:
            label, path = ("kuiper" if not args.kuiper or len(args.kuiper) == 1
                           else "kuiper%d" % (i + 1)), value
        if not os.access(path, os.X_OK):
            sys.exit("fidelity: %s not found: build it with cmake --build --preset solutions "
                     "--target kuiper_cli" % path)
        builds.append((label, path))
    if "ort" in peers:
        bvt.ort_setup()

    rows, extra = [], {}
    with tempfile.TemporaryDirectory(prefix="fidelity_") as workdir:
        for name in args.models.split(","):
            folder = os.path.join(args.models_dir, name)
            input_path = os.path.join(folder, name + ".input.npy")
            if not os.path.exists(input_path):
                sys.exit("fidelity: %s missing: run /usr/bin/python3 tools/make_models.py"
                         % input_path)
            spec = MODELS[name]
            module = spec.build()
            param = os.path.join(folder, name + ".pnnx.param")
            ncnn = (bvt.ncnn_files(name, args.ncnn_bench) if set(peers) & set(bvt.NCNN_PEERS)
                    else None)
            measured, ref = measure(name, module, np.load(input_path), input_path, param,
                                    builds, peers, ncnn, workdir)
            rows += [(name, label) + errs for label, errs in measured]
            print("measured %s: float64 output %s, max |value| %.6g"
                  % (name, "x".join(map(str, ref.shape)), np.abs(ref).max()),
                  file=sys.stderr, flush=True)
            extra[name] = []
            for seed in range(FIRST_EXTRA_SEED, FIRST_EXTRA_SEED + args.inputs):
                x = seeded_input(spec.input_shape, seed, spec.input_kind).numpy()
                path = os.path.join(workdir, "input.npy")
                np.save(path, x)
                extra[name].append(measure(name, module, x, path, param, builds, peers, ncnn,
                                           workdir)[0])

    print("errors against float64 PyTorch on each model's fixed input (batch 1); relative error "
          "|y - r| / (|r| + 1e-3 max|r| of its kind)")
    print("%-9s %-14s %12s %12s %12s %12s" % ("model", "runner", "max abs", "max rel", "rms rel",
                                              "p99.9 rel"))
    for name, label, max_abs, max_rel, rms, p999 in rows:
        print("%-9s %-14s %12.4g %12.4g %12.4g %12.4g" % (name, label, max_abs, max_rel, rms, p999))
    if args.inputs:
        print("\nover %d more seeded inputs (seeds %d to %d): mean rms and p99.9 relative error, "
              "and on how many inputs each is above PyTorch float32's" %
              (args.inputs, FIRST_EXTRA_SEED, FIRST_EXTRA_SEED + args.inputs - 1))
        print("%-9s %-14s %12s %12s %12s %12s" % ("model", "runner", "mean rms", "mean p99.9",
                                                  "rms above", "p99.9 above"))
        for name, per_input in extra.items():
            print_extra(name, per_input)
    return 0


if __name__ == "__main__":
    sys.exit(main())
