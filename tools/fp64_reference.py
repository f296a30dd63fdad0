#!/usr/bin/python3
"""How far float32 outputs are from the same model run in float64.

Runs a model recipe (models/) in float64 on its seeded input, then prints the
largest error of PyTorch's float32 reference (<name>.output.npy) and of every
.npy given (e.g. written by `kuiper run`) against it. The float32 reference is
itself only one rounding of the truth: this shows how much of a diff between
two float32 runs neither of them can avoid.

    build/solutions/bin/kuiper run build/models/yolov5s/yolov5s.pnnx.param \\
        build/models/yolov5s/yolov5s.input.npy -o /tmp/engine.npy
    /usr/bin/python3 tools/fp64_reference.py yolov5s /tmp/engine.npy
"""
import argparse
import os
import sys

import numpy as np
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
from models import MODELS  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model", choices=sorted(MODELS))
    ap.add_argument("outputs", nargs="*", help="float32 outputs to measure (.npy)")
    ap.add_argument("--models", default=os.path.join(ROOT, "build", "models"))
    args = ap.parse_args()

    folder = os.path.join(args.models, args.model)
    x = torch.from_numpy(np.load(os.path.join(folder, args.model + ".input.npy")))
    with torch.no_grad():
        truth = MODELS[args.model].build().double()(x.double()).numpy()
    print("float64 output: max |value| %.6g" % np.abs(truth).max())
    named = [("PyTorch float32", os.path.join(folder, args.model + ".output.npy"))]
    for path in args.outputs:
        named.append((path, path))
    for name, path in named:
        err = np.abs(np.load(path).astype(np.float64) - truth)
        at = np.unravel_index(err.argmax(), err.shape)
        print("%-24s max error %.6g at %s (value %.6g), median %.3g"
              % (name, err.max(), list(at), truth[at], np.median(err)))


if __name__ == "__main__":
    main()
