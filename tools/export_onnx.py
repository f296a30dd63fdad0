#!/usr/bin/python3
"""Export the seeded ResNet18 and YOLOv5s recipes of models/ to ONNX.

    /usr/bin/python3 tools/export_onnx.py [--out build/models] [--only NAME] [--opset 11]
                                          [--force]

Writes <out>/NAME/NAME.onnx for the very modules tools/make_models.py exports
to PNNX (same recipe, same seed), so the ONNX importer is checked against the
same NAME.output.npy (PyTorch) and against the PNNX path. Reference .npy files
are written too when missing (they are the same as make_models.py's).

Both are plain torch.onnx.export, YOLOv5s's Detect head included: traced op by
op the head works on 5-D tensors (bs, na, ny, nx, no), which the importer
recognises and lowers onto the engine's models.yolo.Detect layer
(onnx/src/detect_head.cpp; docs/onnx.md says more).

Needs Debian's /usr/bin/python3 (python3-torch, python3-torchvision, python3-onnx).
"""
import argparse
import os
import sys

import numpy as np
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from models import MODELS  # noqa: E402
from models.seeding import seeded_input  # noqa: E402

INPUT_SEED = 0  # the seed tools/make_models.py uses for NAME.input.npy


def export(name, out_dir, opset, force):
    spec = MODELS[name]
    folder = os.path.join(out_dir, name)
    os.makedirs(folder, exist_ok=True)
    onnx_path = os.path.join(folder, name + ".onnx")
    if os.path.exists(onnx_path) and not force:
        print("%-10s up to date (use --force to rebuild)" % name)
        return
    model = spec.build()
    x = seeded_input(spec.input_shape, INPUT_SEED, spec.input_kind)
    with torch.no_grad():
        y = model(x)
        torch.onnx.export(model, (x,), onnx_path, opset_version=opset, input_names=["input"],
                          output_names=["output"], do_constant_folding=True)
    for kind, value in (("input", x), ("output", y)):
        path = os.path.join(folder, "%s.%s.npy" % (name, kind))
        if not os.path.exists(path):
            np.save(path, value.numpy().astype(np.float32))
    print("%-10s %s" % (name, onnx_path))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.path.join(ROOT, "build", "models"))
    parser.add_argument("--only", choices=("resnet18", "yolov5s"))
    parser.add_argument("--opset", type=int, default=11, choices=(11, 12, 13))
    parser.add_argument("--force", action="store_true")
    args = parser.parse_args()
    torch.set_num_threads(1)
    for name in [args.only] if args.only else ["resnet18", "yolov5s"]:
        export(name, args.out, args.opset, args.force)


if __name__ == "__main__":
    main()
