#!/usr/bin/python3
"""Score the trained shape models on the held-out set, twice: from PyTorch's
outputs and from the engine's, with the same metric code (tools/shapes_metrics.py).

    /usr/bin/python3 tools/eval_shapes.py --kuiper build/solutions/bin/kuiper [--models build/models]

The held-out images (the "test" split of models/shapes.py, as many as
tools/train_shapes.py scored) are preprocessed once, written as one .npy batch,
run through PyTorch (the trained state_dict, BatchNorm unfolded) and through
`kuiper run` (the exported graph, BatchNorm folded). Exits 1 when the two
disagree: top-1 must be equal, mAP@0.5 within 0.005.
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "tools"))

from models import shapes_nets as nets  # noqa: E402
import train_shapes  # noqa: E402

TOLERANCE = {nets.CLASSIFIER: 0.0, nets.DETECTOR: 0.005}
TARGET = {nets.CLASSIFIER: 0.95, nets.DETECTOR: 0.8}


def engine_outputs(kuiper, folder, name, x):
    with tempfile.TemporaryDirectory() as tmp:
        inp, out = os.path.join(tmp, "input.npy"), os.path.join(tmp, "output.npy")
        np.save(inp, x)
        subprocess.run([kuiper, "run", os.path.join(folder, name + ".pnnx.param"), inp, "-o", out],
                       check=True, stdout=subprocess.DEVNULL)
        return np.load(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kuiper", required=True, help="the kuiper CLI")
    ap.add_argument("--models", default=os.path.join(ROOT, "build", "models"))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--only", choices=(nets.CLASSIFIER, nets.DETECTOR))
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)

    status = 0
    print("%-16s %-8s %7s %9s %9s %9s  %s" % (
        "model", "metric", "images", "PyTorch", "engine", "|diff|", "verdict"))
    for name in [args.only] if args.only else [nets.CLASSIFIER, nets.DETECTOR]:
        folder = os.path.join(args.models, name)
        weights = os.path.join(folder, name + ".pt")
        if not os.path.exists(weights):
            print("%s is missing: run /usr/bin/python3 tools/train_shapes.py" % weights,
                  file=sys.stderr)
            return 1
        t0 = time.time()
        x, truth = train_shapes.test_set(name)
        model = nets.load(name, weights)
        metric, torch_score = train_shapes.score(name, train_shapes.run_batched(model, x), truth)
        _, engine_score = train_shapes.score(name, engine_outputs(args.kuiper, folder, name, x),
                                             truth)
        diff = abs(torch_score - engine_score)
        agree = diff <= TOLERANCE[name] + 1e-12
        verdict = "agree" if agree else "DISAGREE (allowed %g)" % TOLERANCE[name]
        if torch_score < TARGET[name]:
            verdict += ", below the target %.2f" % TARGET[name]
        print("%-16s %-8s %7d %9.4f %9.4f %9.4f  %s (%.0f s)" % (
            name, metric, len(x), torch_score, engine_score, diff, verdict, time.time() - t0))
        status |= 0 if agree else 1
    return status


if __name__ == "__main__":
    sys.exit(main())
