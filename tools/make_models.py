#!/usr/bin/python3
"""Export every model recipe in models/ to PNNX, with PyTorch reference data.

    /usr/bin/python3 tools/make_models.py [--out build/models] [--only NAME]
                                          [--checkpoint PATH] [--force] [--fixtures]

For each model NAME this writes into <out>/NAME/:
    NAME.pnnx.param, NAME.pnnx.bin      the graph (BatchNorm folded into convs)
    NAME.input.npy, NAME.output.npy     seeded float32 input (batch 1), PyTorch's output
    NAME.input_b4.npy, NAME.output_b4.npy   (resnet18) the same for batch 4
    NAME.output_f64.npy                 (resnet18, yolov5s) PyTorch's batch-1 output in float64
    imagenet_classes.txt / coco_classes.txt (resnet18 / yolov5s) label names

--checkpoint loads real weights for the one model named by --only (see the
docstrings of models/resnet18.py and models/yolov5s.py for the key layout).
--fixtures instead regenerates the committed, byte-reproducible files in
models/fixtures/: the tiny graphs in full, and only the .param text of the big
ones (their weights are tens of MB and belong under build/).

Needs Debian's /usr/bin/python3 (python3-torch, python3-torchvision).
"""
import argparse
import copy
import os
import sys
import time

import numpy as np
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from models import MODELS  # noqa: E402
from models.seeding import seeded_input  # noqa: E402
from pnnx_export import export  # noqa: E402

FIXTURES = os.path.join(ROOT, "models", "fixtures")
INPUT_SEED = 0


def reference_pairs(spec):
    """(file suffix, input) for each batch size we keep reference data for."""
    pairs = [("", seeded_input(spec.input_shape, INPUT_SEED, spec.input_kind))]
    for b in spec.extra_batches:
        shape = (b,) + tuple(spec.input_shape[1:])
        pairs.append(("_b%d" % b, seeded_input(shape, INPUT_SEED + b, spec.input_kind)))
    return pairs


def make_model(spec, out_dir, checkpoint=None, force=False, param_only=False, flat=False):
    """Write one model's files; returns the list of files written."""
    folder = out_dir if flat else os.path.join(out_dir, spec.name)
    os.makedirs(folder, exist_ok=True)
    path = lambda suffix: os.path.join(folder, spec.name + suffix)  # noqa: E731
    param, binary = path(".pnnx.param"), path(".pnnx.bin")
    pairs = reference_pairs(spec)
    wanted = [param] if param_only else [param, binary] + [
        path(".%s%s.npy" % (kind, sfx)) for sfx, _ in pairs for kind in ("input", "output")]
    # The float64 output is the exact result a float32 run is judged by: two
    # float32 runs (PyTorch's and the engine's) each carry their own rounding.
    exact = path(".output_f64.npy") if not (param_only or spec.small) else None
    if exact:
        wanted.append(exact)
    if spec.class_file and not param_only:
        wanted.append(os.path.join(folder, spec.class_file))
    if not force and all(os.path.exists(f) for f in wanted):
        print("%-16s up to date (use --force to rebuild)" % spec.name)
        return []

    # Said before the work starts: YOLOv5s takes a while, and the line finishes when it is done.
    print("%-16s exporting ..." % spec.name, end=" ", flush=True)
    t0 = time.time()
    model = spec.build(checkpoint=checkpoint)
    export(model, [pairs[0][1]], param, None if param_only else binary)
    if not param_only:
        with torch.no_grad():
            for sfx, x in pairs:
                np.save(path(".input%s.npy" % sfx), x.numpy().astype(np.float32))
                np.save(path(".output%s.npy" % sfx), model(x).numpy().astype(np.float32))
            if exact:
                x = pairs[0][1].double()
                np.save(exact, copy.deepcopy(model).double()(x).numpy())
        if spec.class_file:
            with open(os.path.join(folder, spec.class_file), "w") as f:
                f.write("\n".join(spec.class_names()) + "\n")
    print("%5.1fs  %s" % (time.time() - t0, folder))
    return wanted


def make_fixtures(names):
    # One thread: the tiny outputs must not depend on how work is split.
    torch.set_num_threads(1)
    for name in names:
        spec = MODELS[name]
        make_model(spec, FIXTURES, force=True, param_only=not spec.small, flat=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "models"))
    ap.add_argument("--only", choices=sorted(MODELS), help="export just this model")
    ap.add_argument("--checkpoint", help="state_dict to load instead of seeded weights")
    ap.add_argument("--force", action="store_true", help="rewrite files that exist")
    ap.add_argument("--fixtures", action="store_true", help="regenerate models/fixtures/")
    args = ap.parse_args(argv)

    names = [args.only] if args.only else list(MODELS)
    if args.checkpoint and not (args.only and MODELS[args.only].accepts_checkpoint):
        ap.error("--checkpoint needs --only resnet18 or --only yolov5s")
    if args.fixtures:
        make_fixtures(names)
        return 0
    t0 = time.time()
    for name in names:
        # Files made from seeded weights must not pass for the checkpoint's.
        make_model(MODELS[name], args.out, args.checkpoint, args.force or bool(args.checkpoint))
    print("done in %.1fs" % (time.time() - t0))
    return 0


if __name__ == "__main__":
    sys.exit(main())
