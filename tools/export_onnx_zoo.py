#!/usr/bin/python3
"""Export a zoo of real torchvision models to ONNX, the way a user exports them.

    /usr/bin/python3 tools/export_onnx_zoo.py [--out build/models/onnx] [--only NAME ...]
                                              [--force] [--list]

Each entry is written to <out>/<entry>/ as model.onnx, input.npy (seeded),
output.npy (PyTorch's output for that input) and output_fp64.npy (the same
model run in float64). An entry is a model at one
opset, plain `torch.onnx.export` with its defaults (constant folding on, the
exporter's own deduplication of shared initializers into Identity nodes),
plus a few variants (constant folding off, a dynamic batch axis).

No downloads: the torchvision models are built with `weights=None` from a
fixed seed, and their BatchNorm layers get non-trivial statistics (random
affine weights, running mean and variance from a few seeded batches run in
train mode), so a mistake in the importer's BatchNormalization or in the
exporter's Conv+BN fusion shows in the output. Inputs are small (64x64) to
keep the ctest short; every architecture here takes them.

tools/onnx_zoo_check.py runs every entry through `kuiper run` against
output.npy (ctest label onnx); docs/onnx.md lists the entries that do not
run yet and why.

Needs Debian's /usr/bin/python3 (python3-torch, python3-torchvision, python3-onnx).
"""
import argparse
import copy
import hashlib
import json
import os
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
from models.yolov5s import YOLOv5  # noqa: E402

SEED = 16  # one seed for every weight, statistic and input of the zoo
SIZE = 64


class SmallUNet(nn.Module):
    """A two-level UNet: conv-BN-ReLU blocks, max pooling down, bilinear
    upsampling up (half pixel on one level, align_corners on the other),
    skip connections joined with cat."""

    @staticmethod
    def block(cin, cout):
        return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout),
                             nn.ReLU(inplace=True), nn.Conv2d(cout, cout, 3, padding=1),
                             nn.BatchNorm2d(cout), nn.ReLU(inplace=True))

    def __init__(self, classes=2):
        super().__init__()
        self.enc1, self.enc2, self.mid = self.block(3, 8), self.block(8, 16), self.block(16, 32)
        self.dec2, self.dec1 = self.block(32 + 16, 16), self.block(16 + 8, 8)
        self.head = nn.Conv2d(8, classes, 1)

    def forward(self, x):
        e1 = self.enc1(x)
        e2 = self.enc2(F.max_pool2d(e1, 2))
        m = self.mid(F.max_pool2d(e2, 2))
        up2 = F.interpolate(m, scale_factor=2.0, mode="bilinear", align_corners=False)
        d2 = self.dec2(torch.cat([up2, e2], dim=1))
        up1 = F.interpolate(d2, scale_factor=2.0, mode="bilinear", align_corners=True)
        d1 = self.dec1(torch.cat([up1, e1], dim=1))
        return self.head(d1)


def torchvision_model(name):
    return lambda: getattr(torchvision.models, name)(weights=None)


# name -> builder. Every model at every opset of OPSETS.
MODELS = {
    "resnet18": torchvision_model("resnet18"),
    "mobilenet_v2": torchvision_model("mobilenet_v2"),  # Clip = ReLU6
    "mobilenet_v3_small": torchvision_model("mobilenet_v3_small"),  # HardSigmoid, HardSwish
    "squeezenet1_1": torchvision_model("squeezenet1_1"),  # Identity, ceil_mode pooling
    "shufflenet_v2_x0_5": torchvision_model("shufflenet_v2_x0_5"),  # Split, 5-D channel shuffle
    "efficientnet_b0": torchvision_model("efficientnet_b0"),  # SiLU, squeeze-excitation
    "unet_small": SmallUNet,  # Resize (bilinear), Concat
    # The project's YOLOv5s, Detect head included: traced op by op it is 5-D
    # Reshape/Transpose/Slice and broadcasting arithmetic; tools/onnx_zoo_check.py
    # runs it fused and node by node (--no-fuse).
    "yolov5s": YOLOv5,
}
OPSETS = (11, 13, 17)
# Variants of one model: entry -> (model, opset, export options). "calibrate":
# False keeps torchvision's fresh BatchNorm (weight 1, bias 0, mean 0, var 1):
# the folded Conv biases are then equal, and the exporter shares them through
# Identity nodes (issue 16's first report).
VARIANTS = {
    "resnet18_opset13_freshbn": ("resnet18", 13, {"calibrate": False}),
    # Opset 10: Clip keeps min and max in attributes.
    "mobilenet_v2_opset10": ("mobilenet_v2", 10, {}),
    "resnet18_opset13_nofold": ("resnet18", 13, {"do_constant_folding": False}),
    # A symbolic batch ("batch"): run at batch 1 (input.npy) and 3 (input_b3.npy).
    "resnet18_opset13_dynbatch": ("resnet18", 13, {
        "dynamic_axes": {"input": {0: "batch"}, "output": {0: "batch"}},
        "batches": (3,),
    }),
}


def entries():
    table = {}
    for model in MODELS:
        for opset in OPSETS:
            table["%s_opset%d" % (model, opset)] = (model, opset, {})
    table.update(VARIANTS)
    return table


def calibrate(model, gen):
    """Random BatchNorm affine parameters, and running statistics from a few
    seeded batches in train mode (momentum None: their plain average)."""
    bns = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    with torch.no_grad():
        for bn in bns:
            bn.weight.copy_(torch.rand(bn.weight.shape, generator=gen) + 0.5)
            bn.bias.copy_(torch.randn(bn.bias.shape, generator=gen) * 0.2)
            bn.reset_running_stats()
            bn.momentum = None
        model.train()
        for _ in range(3):
            model(torch.randn(4, 3, SIZE, SIZE, generator=gen))
    model.eval()
    for bn in bns:
        bn.momentum = 0.1


def seeded_model(model_name, calibrated=True):
    """The zoo's model `model_name` in eval mode with its seeded weights and
    BatchNorm statistics, its seeded input (1, 3, SIZE, SIZE), and the
    generator, ready for more seeded inputs. tools/pnnx_zoo.py builds its
    models here too, so both zoos check the same networks on the same input."""
    torch.manual_seed(SEED)
    gen = torch.Generator().manual_seed(SEED)
    model = MODELS[model_name]()
    if calibrated:
        calibrate(model, gen)
    model.eval()
    return model, torch.randn(1, 3, SIZE, SIZE, generator=gen), gen


def script_hash():
    """SHA-256 of this file and of the model code it imports: an entry written
    by another version is out of date."""
    digest = hashlib.sha256()
    for path in (os.path.abspath(__file__), os.path.join(ROOT, "models", "yolov5s.py")):
        with open(path, "rb") as f:
            digest.update(f.read())
    return digest.hexdigest()


def export(entry, spec, out_dir, force):
    model_name, opset, options = spec
    options = dict(options)
    calibrated = options.pop("calibrate", True)
    batches = options.pop("batches", ())
    folder = os.path.join(out_dir, entry)
    paths = {k: os.path.join(folder, k) for k in ("model.onnx", "input.npy", "output.npy")}
    stamp = os.path.join(folder, "exporter.sha256")
    current = os.path.exists(stamp) and open(stamp).read() == script_hash()
    if not force and current and all(os.path.exists(p) for p in paths.values()):
        return "up to date"
    os.makedirs(folder, exist_ok=True)
    model, x, gen = seeded_model(model_name, calibrated)
    with torch.no_grad():
        y = model(x)
        torch.onnx.export(model, (x,), paths["model.onnx"], opset_version=opset,
                          input_names=["input"], output_names=["output"], **options)
    np.save(paths["input.npy"], x.numpy().astype(np.float32))
    np.save(paths["output.npy"], y.numpy().astype(np.float32))
    # The same model in float64: how far PyTorch's own float32 result is from
    # the exact one, for tools/onnx_zoo_check.py.
    with torch.no_grad():
        y64 = copy.deepcopy(model).double()(x.double())
    np.save(os.path.join(folder, "output_fp64.npy"), y64.numpy())
    for batch in batches:  # more pairs for the same model: input_bN.npy, output_bN.npy
        xb = torch.randn(batch, 3, SIZE, SIZE, generator=gen)
        with torch.no_grad():
            yb = model(xb)
        np.save(os.path.join(folder, "input_b%d.npy" % batch), xb.numpy().astype(np.float32))
        np.save(os.path.join(folder, "output_b%d.npy" % batch), yb.numpy().astype(np.float32))
    with open(stamp, "w") as f:  # last: an interrupted export is redone
        f.write(script_hash())
    return "max|ref| %.3g" % float(y.abs().max())


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.path.join(ROOT, "build", "models", "onnx"))
    parser.add_argument("--only", nargs="*", help="entries to export (default: all)")
    parser.add_argument("--force", action="store_true",
                        help="re-export entries even when this script has not changed")
    parser.add_argument("--list", action="store_true", help="print the entry names and stop")
    args = parser.parse_args()
    table = entries()
    if args.list:
        print("\n".join(table))
        return 0
    names = args.only or list(table)
    unknown = [n for n in names if n not in table]
    if unknown:
        parser.error("unknown entries: %s (see --list)" % ", ".join(unknown))
    torch.set_num_threads(1)  # the machine is shared; these models are small
    for name in names:
        print("%-32s %s" % (name, export(name, table[name], args.out, args.force)), flush=True)
    with open(os.path.join(args.out, "zoo.json"), "w") as f:
        json.dump({n: {"model": table[n][0], "opset": table[n][1]} for n in table}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
