#!/usr/bin/python3
"""Builds the ncnn peer of tools/bench_vs_torch.py and tools/bench_load.py, and checks it.

    /usr/bin/python3 tools/ncnn_models.py --ncnn PREFIX --pnnx PNNX
        [--models resnet18,yolov5s] [--out build/ncnn]

Writes into --out: ncnn_bench (tools/ncnn_bench.sh against the ncnn installed
at PREFIX) and, per model, <name>.ncnn.param and <name>.ncnn.bin: the seeded
module of models/ (the one tools/make_models.py exports for the engine),
traced by torch.jit.trace at batch 1 and converted by Tencent's pnnx with fp32
weights (fp16=0). pnnx folds each BatchNorm into its convolution itself. Then
it runs ncnn once on the model's fixed input (build/models/<name>/, or
$KUIPER_MODELS) and compares with PyTorch float32: the model is kept only if
the largest difference is within 1e-4 * max(1, max |PyTorch output|), the
end-to-end tests' bound; otherwise its files are removed, so the benchmarks
skip it, and the script fails.

ncnn and pnnx are never build or test dependencies of the project; build
them outside the repository. ncnn, CPU only, static (about 6 minutes on 2
idle cores):

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
"""
import argparse
import os
import shutil
import subprocess
import sys

import numpy as np
import torch

from bench_vs_torch import ROOT
from models import MODELS


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
    ap.add_argument("--pnnx", required=True, help="the pnnx executable")
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
        convert(args.pnnx, name, workdir, args.out)
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
