#!/usr/bin/python3
"""Builds the ncnn peer of tools/bench_vs_torch.py and tools/bench_load.py, and checks it.

    /usr/bin/python3 tools/ncnn_models.py --ncnn PREFIX [--pnnx PNNX]
        [--models resnet18,yolov5s] [--out build/ncnn]

Writes into --out: ncnn_bench (tools/ncnn_bench.sh against the ncnn installed
at PREFIX) and, per model, <name>.ncnn.param and <name>.ncnn.bin, fp32, made
one of two ways:
- --pnnx PNNX: the seeded module of models/ (the one tools/make_models.py
  exports for the engine), traced by torch.jit.trace at batch 1 and converted
  by Tencent's pnnx with fp32 weights (fp16=0); pnnx folds each BatchNorm into
  its convolution itself, rounding in float32 (our exporter folds in
  float64 and rounds once);
- without it: from the engine's own files, <models>/<name>/<name>.pnnx.{param,bin}
  (BatchNorm already folded), operator for operator (to_ncnn below): a
  convolution with the ReLU after it fused, as pnnx's ncnn writer fuses them;
  SiLU as ncnn's Swish; YOLOv5s's Detect as the ncnn layers of its forward
  (1x1 convolution, reshape, permute, sigmoid, slices, the grid and anchor
  arithmetic, concatenations). The same graph as the engine runs, in ncnn's
  layers.
Then it runs ncnn once on the model's fixed input (<models>/<name>/, models
being build/models or $KUIPER_MODELS) and compares with PyTorch float32: the
model is kept only if the largest difference is within
1e-4 * max(1, max |PyTorch output|), the end-to-end tests' bound; otherwise
its files are removed, so the benchmarks skip it, and the script fails.

ncnn and pnnx are never build or test dependencies of the project; build
them outside the repository. ncnn, CPU only, static:

    cmake -S ncnn -B ncnn-build -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=ncnn-install \\
        -DNCNN_VULKAN=OFF -DNCNN_BUILD_TOOLS=OFF -DNCNN_BUILD_EXAMPLES=OFF \\
        -DNCNN_BUILD_BENCHMARK=OFF -DNCNN_BUILD_TESTS=OFF -DNCNN_PYTHON=OFF -DNCNN_SHARED_LIB=OFF
    cmake --build ncnn-build -j2 && cmake --install ncnn-build

pnnx, from the same checkout (ncnn/tools/pnnx), against Debian's libtorch-dev
(the torch of python3-torch), as models/README.md "Real pnnx" describes but
with its ncnn writer kept: set CMAKE_CXX_STANDARD to 17 in its CMakeLists.txt,
turn the onnx writer off (`if(PROTOBUF_FOUND)` -> `if(FALSE)` in
src/CMakeLists.txt: Caffe2's CMake finds protobuf, pnnx's onnx code does not
build against Debian's), then

    cmake -S ncnn/tools/pnnx -B pnnx-build -DCMAKE_BUILD_TYPE=Release \\
        -DTorch_DIR=/usr/lib/x86_64-linux-gnu/cmake/Torch -DPNNX_TNN2PNNX=OFF
    cmake --build pnnx-build -j2 --target pnnx           # pnnx-build/src/pnnx

The --pnnx route follows pnnx's command line (main.cpp: inputshape, fp16,
device; it writes <name>.ncnn.param beside <name>.pt, in <out>/pnnx_<name>/).
Run with a pnnx built as above, it writes the same graphs as the route
without it (docs/performance.md#ncnn-real-pnnx: the comparison, both timed):
- ResNet18: the same layers in the same order with the same parameters, each
  ReLU after a convolution fused into it (9=1) as here, except that pnnx
  leaves out the Flatten before the InnerProduct (which flattens its input
  itself). It passes the check.
- YOLOv5s: the same layer types in the same order (Split and MemoryData
  aside), as many layers and blobs, the same convolution parameters, each SiLU
  a Swish layer of its own in both (ncnn's Convolution has no SiLU activation
  to fuse). Detect becomes the layers add_detect writes, in the same order,
  laid out differently: pnnx keeps each level 4-D, (na, ny, nx, no), where
  add_detect flattens the cells to (na, ny*nx, no), and its grid and anchor
  MemoryData are (1, ny, nx, 2) and (na, 1, 1, 2), broadcast by BinaryOp,
  where add_detect stores them at full shape. Given the weights of the route
  without --pnnx, pnnx's file gives bit-identical output to that route's. With
  its own weights it fails the check on two box heights of the coarsest level
  and is removed (its files stay in <out>/pnnx_yolov5s/). The weights are the
  whole difference: pnnx rounds each BatchNorm's scale to float32 and
  multiplies in float32, so a third of the weights differ from ours, by at
  most 1.6e-7 of their layer's largest weight, and this model's largest
  outputs carry such differences into the fourth significant digit
  (docs/performance.md#fidelity); the route without --pnnx passes the same
  check with little to spare.
So the route without --pnnx, the one the benchmarks use, runs the graph the
real pnnx writes, with the exporter's weights.
"""
import argparse
import os
import shutil
import struct
import subprocess
import sys
import zipfile

import numpy as np
import torch

from bench_vs_torch import ROOT
from models import MODELS


def read_pnnx(param_path):
    """The operators of a .pnnx.param: [(type, name, inputs, outputs, params, shapes)]."""
    ops = []
    with open(param_path) as f:
        lines = f.read().splitlines()[2:]
    for line in lines:
        tok = line.split()
        nin, nout = int(tok[2]), int(tok[3])
        params, shapes = {}, {}
        for item in tok[4 + nin + nout:]:
            key, _, value = item.partition("=")
            if key.startswith("#"):
                shapes[key[1:]] = [int(v) for v in value[1:value.index(")")].split(",")]
            elif not key.startswith("@"):
                params[key] = value
        ops.append((tok[0], tok[1], tok[4:4 + nin], tok[4 + nin:4 + nin + nout], params, shapes))
    return ops


def ints(value):
    return [int(v) for v in value.strip("()").split(",")]


class NcnnWriter:
    """Collects ncnn layers; write() adds the Split layers ncnn needs for shared blobs."""

    def __init__(self):
        self.layers = []  # [type, name, inputs, outputs, params, weight bytes]

    def add(self, kind, name, inputs, outputs, params=(), weights=b""):
        self.layers.append([kind, name, list(inputs), list(outputs), list(params), weights])

    def write(self, param_path, bin_path):
        consumers = {}
        for layer in self.layers:
            for i, blob in enumerate(layer[2]):
                consumers.setdefault(blob, []).append((layer, i))
        layers = []
        for layer in self.layers:
            layers.append(layer)
            for blob in layer[3]:
                users = consumers.get(blob, [])
                if len(users) > 1:  # ncnn: one consumer per blob, the rest through Split
                    outs = ["%s_s%d" % (blob, k) for k in range(len(users))]
                    for (user, i), out in zip(users, outs):
                        user[2][i] = out
                    layers.append(["Split", "split_" + blob, [blob], outs, [], b""])
        blobs = {b for layer in layers for b in layer[2] + layer[3]}
        with open(param_path, "w") as f:
            f.write("7767517\n%d %d\n" % (len(layers), len(blobs)))
            for kind, name, ins, outs, params, _ in layers:
                f.write(" ".join([kind, name, str(len(ins)), str(len(outs))] + ins + outs
                                 + params) + "\n")
        with open(bin_path, "wb") as f:
            for layer in layers:
                f.write(layer[5])


def f32(array):
    return np.ascontiguousarray(array, dtype=np.float32).tobytes()


def conv_weights(weight, bias):
    """A Convolution's or InnerProduct's weights: a zero tag (raw float32), then the bias."""
    return struct.pack("<I", 0) + f32(weight) + f32(bias)


def to_ncnn(param_path, bin_path, out_param, out_bin):
    """Writes the engine's PNNX model as an ncnn model of the same operators."""
    ops = read_pnnx(param_path)
    weights = zipfile.ZipFile(bin_path)

    def attr(op_name, key, shape):
        return np.frombuffer(weights.read("%s.%s" % (op_name, key)), np.float32).reshape(shape)

    consumers = {}
    for op in ops:
        for blob in op[2]:
            consumers.setdefault(blob, []).append(op)
    rename = {}  # pnnx blob -> ncnn blob (the input and output get ncnn's usual names)
    for kind, name, ins, outs, params, shapes in ops:
        if kind == "pnnx.Input":
            rename[outs[0]] = "in0"
        if kind == "pnnx.Output":
            rename[ins[0]] = "out0"
    blob = lambda b: rename.get(b, b)  # noqa: E731
    w = NcnnWriter()
    fused = set()
    for kind, name, ins, outs, params, shapes in ops:
        src, dst = [blob(b) for b in ins], [blob(b) for b in outs]
        if name in fused or kind == "pnnx.Output":
            continue
        if kind == "pnnx.Input":
            n, c, h, wd = shapes[outs[0]]
            w.add("Input", "in0", [], dst, ["0=%d" % wd, "1=%d" % h, "2=%d" % c])
        elif kind == "nn.Conv2d":
            if params["groups"] != "1" or params["padding_mode"] != "zeros":
                sys.exit("ncnn_models: %s: only plain convolutions are converted" % name)
            kh, kw = ints(params["kernel_size"])
            weight = attr(name, "weight", (int(params["out_channels"]), -1))
            bias = (attr(name, "bias", (-1,)) if params["bias"] == "True"
                    else np.zeros(weight.shape[0], np.float32))
            extra = []
            after = consumers.get(outs[0], [])
            if len(after) == 1 and after[0][0] == "nn.ReLU":  # fused, as pnnx's ncnn writer does
                fused.add(after[0][1])
                dst = [blob(after[0][3][0])]
                extra = ["9=1"]
            (dh, dw), (sh, sw), (ph, pw) = (ints(params[k]) for k in ("dilation", "stride",
                                                                      "padding"))
            w.add("Convolution", name, src, dst,
                  ["0=%d" % weight.shape[0], "1=%d" % kw, "11=%d" % kh, "2=%d" % dw, "12=%d" % dh,
                   "3=%d" % sw, "13=%d" % sh, "4=%d" % pw, "14=%d" % ph, "5=1",
                   "6=%d" % weight.size] + extra, conv_weights(weight, bias))
        elif kind == "nn.ReLU":
            w.add("ReLU", name, src, dst)
        elif kind == "nn.SiLU":
            w.add("Swish", name, src, dst)
        elif kind == "nn.MaxPool2d":
            if params["ceil_mode"] != "False" or ints(params["dilation"]) != [1, 1]:
                sys.exit("ncnn_models: %s: only floor-mode, undilated max pooling" % name)
            (kh, kw), (sh, sw), (ph, pw) = (ints(params[k]) for k in ("kernel_size", "stride",
                                                                      "padding"))
            w.add("Pooling", name, src, dst,
                  ["0=0", "1=%d" % kw, "11=%d" % kh, "2=%d" % sw, "12=%d" % sh, "3=%d" % pw,
                   "13=%d" % ph, "14=%d" % pw, "15=%d" % ph, "5=1"])
        elif kind == "nn.AdaptiveAvgPool2d" and ints(params["output_size"]) == [1, 1]:
            w.add("Pooling", name, src, dst, ["0=1", "4=1"])
        elif kind == "torch.flatten":
            w.add("Flatten", name, src, dst)
        elif kind == "nn.Linear":
            weight = attr(name, "weight", (int(params["out_features"]), -1))
            w.add("InnerProduct", name, src, dst,
                  ["0=%d" % weight.shape[0], "1=1", "2=%d" % weight.size],
                  conv_weights(weight, attr(name, "bias", (-1,))))
        elif kind == "pnnx.Expression" and params["expr"] == "add(@0,@1)":
            w.add("BinaryOp", name, src, dst, ["0=0"])
        elif kind == "torch.cat":
            dim = int(params["dim"])
            rank = len(shapes[ins[0]])
            w.add("Concat", name, src, dst, ["0=%d" % ((dim % rank) - 1)])  # ncnn has no batch
        elif (kind == "nn.Upsample" and params["mode"] == "nearest"
              and params["size"] == "None"):
            sh, sw = (float(v) for v in params["scale_factor"].strip("()").split(","))
            w.add("Interp", name, src, dst, ["0=1", "1=%e" % sh, "2=%e" % sw])
        elif kind == "models.yolo.Detect":
            add_detect(w, name, src, dst[0], params, [shapes[b] for b in ins], attr)
        else:
            sys.exit("ncnn_models: operator %s (%s) has no ncnn form here" % (kind, name))
    w.write(out_param, out_bin)


def add_detect(w, name, src, dst, params, shapes, attr):
    """models/yolov5s.py's Detect.forward in ncnn layers, level by level, the same arithmetic
    in the same order: xy = (2 sigmoid(p) - 0.5 + grid) * stride, wh = (2 sigmoid(p))^2 * anchor."""
    na, no = int(params["na"]), int(params["nc"]) + 5
    anchors = attr(name, "anchors", (len(src), na, 2))
    strides = attr(name, "strides", (-1,))
    levels = []
    for i, (x, shape) in enumerate(zip(src, shapes)):
        ny, nx = shape[2], shape[3]
        cells = ny * nx
        p = "%s_%d" % (name, i)
        weight = attr(name, "m.%d.weight" % i, (na * no, -1))
        w.add("Convolution", p + "_conv", [x], [p + "_p"],
              ["0=%d" % (na * no), "1=1", "5=1", "6=%d" % weight.size],
              conv_weights(weight, attr(name, "m.%d.bias" % i, (-1,))))
        # (na*no, ny, nx) -> (na, no, ny*nx) -> (na, ny*nx, no): view and permute.
        w.add("Reshape", p + "_view", [p + "_p"], [p + "_v"],
              ["0=%d" % cells, "1=%d" % no, "2=%d" % na])
        w.add("Permute", p + "_permute", [p + "_v"], [p + "_t"], ["0=1"])
        w.add("Sigmoid", p + "_sigmoid", [p + "_t"], [p + "_y"])
        w.add("Slice", p + "_slice", [p + "_y"], [p + "_xy", p + "_wh", p + "_rest"],
              ["-23300=3,2,2,-233", "1=2"])
        gy, gx = np.meshgrid(np.arange(ny), np.arange(nx), indexing="ij")
        grid = np.broadcast_to(np.stack([gx, gy], -1).reshape(1, cells, 2), (na, cells, 2))
        anchor = np.broadcast_to(anchors[i].reshape(na, 1, 2), (na, cells, 2))
        memory = ["0=2", "1=%d" % cells, "2=%d" % na]  # full shape: no broadcasting rule needed
        w.add("MemoryData", p + "_grid", [], [p + "_grid"], memory, f32(grid))
        w.add("MemoryData", p + "_anchor", [], [p + "_anchor"], memory, f32(anchor))
        w.add("BinaryOp", p + "_xy2", [p + "_xy"], [p + "_xy2"], ["0=2", "1=1", "2=2.0"])
        w.add("BinaryOp", p + "_xyh", [p + "_xy2"], [p + "_xyh"], ["0=1", "1=1", "2=0.5"])
        w.add("BinaryOp", p + "_xyg", [p + "_xyh", p + "_grid"], [p + "_xyg"], ["0=0"])
        w.add("BinaryOp", p + "_xys", [p + "_xyg"], [p + "_xys"],
              ["0=2", "1=1", "2=%e" % strides[i]])
        w.add("BinaryOp", p + "_wh2", [p + "_wh"], [p + "_wh2"], ["0=2", "1=1", "2=2.0"])
        w.add("UnaryOp", p + "_whsq", [p + "_wh2"], [p + "_whsq"], ["0=4"])
        w.add("BinaryOp", p + "_wha", [p + "_whsq", p + "_anchor"], [p + "_wha"], ["0=2"])
        w.add("Concat", p + "_cat", [p + "_xys", p + "_wha", p + "_rest"], [p + "_row"], ["0=2"])
        w.add("Reshape", p + "_rows", [p + "_row"], [p + "_out"],
              ["0=%d" % no, "1=%d" % (na * cells)])
        levels.append(p + "_out")
    w.add("Concat", name + "_cat", levels, [dst], ["0=0"])


def convert(pnnx, name, workdir, out):
    """<out>/<name>.ncnn.{param,bin} from the traced module, by pnnx."""
    spec = MODELS[name]
    os.makedirs(workdir, exist_ok=True)
    traced = os.path.join(workdir, name + ".pt")
    with torch.no_grad():
        torch.jit.trace(spec.build(), torch.rand(*spec.input_shape)).save(traced)
    shape = "[%s]" % ",".join(map(str, spec.input_shape))
    proc = subprocess.run([pnnx, traced, "inputshape=" + shape, "fp16=0", "device=cpu"],
                          cwd=workdir, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit("ncnn_models: pnnx failed on %s:\n%s" % (name, proc.stderr[-3000:]))
    for ext in ("param", "bin"):
        shutil.copyfile(os.path.join(workdir, "%s.ncnn.%s" % (name, ext)),
                        os.path.join(out, "%s.ncnn.%s" % (name, ext)))


def check(bench, name, out, models_dir, workdir):
    """Max abs diff of ncnn against PyTorch float32 on the fixed input, and the bound."""
    spec = MODELS[name]
    x = np.load(os.path.join(models_dir, name, name + ".input.npy"))
    with torch.no_grad():
        want = spec.build()(torch.from_numpy(x)).numpy()
    raw_in, raw_out = os.path.join(workdir, "in.f32"), os.path.join(workdir, "out.f32")
    x.astype(np.float32).tofile(raw_in)
    proc = subprocess.run([bench, os.path.join(out, name + ".ncnn.param"),
                           os.path.join(out, name + ".ncnn.bin"), ",".join(map(str, x.shape[1:])),
                           "1", "0", "1", "--input", raw_in, "--output", raw_out],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        return None, "ncnn_bench failed: " + proc.stderr.strip()
    got = np.fromfile(raw_out, dtype=np.float32)
    if got.size != want.size:
        return None, "ncnn gives %d values (%s), PyTorch %s" % (got.size, proc.stderr.strip(),
                                                                 want.shape)
    diff = np.abs(got.reshape(want.shape) - want).max()
    return diff, 1e-4 * max(1.0, np.abs(want).max())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ncnn", required=True, help="ncnn install prefix (include/ncnn, lib)")
    ap.add_argument("--pnnx", help="Tencent's pnnx executable (default: convert the engine's "
                                   "own PNNX files)")
    ap.add_argument("--models", default="resnet18,yolov5s")
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "ncnn"))
    ap.add_argument("--models-dir", default=os.environ.get(
        "KUIPER_MODELS", os.path.join(ROOT, "build", "models")))
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    bench = os.path.join(args.out, "ncnn_bench")
    subprocess.run([os.path.join(ROOT, "tools", "ncnn_bench.sh"), args.ncnn, bench], check=True,
                   stdout=subprocess.DEVNULL)
    failed = []
    for name in args.models.split(","):
        workdir = os.path.join(args.out, "pnnx_" + name)
        os.makedirs(workdir, exist_ok=True)
        if args.pnnx:
            convert(args.pnnx, name, workdir, args.out)
        else:
            prefix = os.path.join(args.models_dir, name, name)
            to_ncnn(prefix + ".pnnx.param", prefix + ".pnnx.bin",
                    os.path.join(args.out, name + ".ncnn.param"),
                    os.path.join(args.out, name + ".ncnn.bin"))
        diff, bound = check(bench, name, args.out, args.models_dir, workdir)
        if diff is None or diff > bound:
            failed.append(name)
            for ext in ("param", "bin"):
                os.remove(os.path.join(args.out, "%s.ncnn.%s" % (name, ext)))
            print("%s: REMOVED, ncnn does not match PyTorch: %s" % (
                name, bound if diff is None else "max abs diff %.3g > %.3g" % (diff, bound)))
        else:
            print("%s: ncnn matches PyTorch float32, max abs diff %.3g (bound %.3g)"
                  % (name, diff, bound))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
