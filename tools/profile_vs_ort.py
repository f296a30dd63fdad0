#!/usr/bin/python3
"""The engine's time per module beside ONNX Runtime's, from both profilers, in alternated rounds.

    /usr/bin/python3 tools/profile_vs_ort.py [--kuiper build/solutions/bin/kuiper]
        [--model yolov5s] [--batch 1] [--threads 2] [--rounds 5] [--runs 10] [--depth 2]

Each round runs `kuiper bench MODEL --profile` and then `tools/ort_bench.js
build/ort/MODEL.onnx ... --profile` (build/ort as tools/bench_vs_torch.py
leaves it: the package installed, the model exported). Both print a time per
operator (per node of ONNX Runtime's optimised graph). Operators are summed
by the first --depth parts of their module path ("model.2.cv1.conv" and
ONNX Runtime's "/model.2/cv1/conv/Conv" both count to "model.2" at depth 2),
so that a convolution meets its fused SiLU, bias and residual add on either
side. The table gives each module's median over the rounds, largest ONNX
Runtime time first, and the difference. Operators without a module path (the
engine's PNNX expressions and cats, ONNX Runtime's layout reorders) are rows
of their own: ONNX Runtime counts a residual add inside its module, the engine
as a `pnnx_expr_N` row. Times are with profiling on (both sides time each
operator), and one round's rows speak for that round's minutes only.
"""
import argparse
import collections
import os
import re
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from models import MODELS  # noqa: E402

ORT_DIR = os.path.join(ROOT, "build", "ort")


def per_module(output, depth):
    """({module: ms}, per-image median) from one profiler's printout."""
    modules = collections.defaultdict(float)
    median = None
    in_table = False
    for line in output.splitlines():
        found = re.match(r"per image: median ([\d.]+) ms", line)
        if found:
            median = float(found.group(1))
        if line.startswith("type "):
            in_table = True
            continue
        fields = line.split()
        if not in_table or len(fields) < 5:
            continue
        modules[".".join(module_path(fields[1]).split(".")[:depth])] += float(fields[-2])
    return modules, median


def module_path(name):
    """The module path of an operator: the engine's names are it ("layer4.0.conv1");
    ONNX Runtime's are torch.onnx's scopes and the node ("/layer4/layer4.0/conv1/Conv",
    "/model.2/cv1/conv/Conv"), where a scope may repeat its parent's path."""
    if "/" not in name:
        return name
    path = ""
    for scope in name.strip("/").split("/")[:-1]:
        path = scope if not path or scope.startswith(path + ".") else path + "." + scope
    return path or name.strip("/")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kuiper", default=os.path.join(ROOT, "build", "solutions", "bin", "kuiper"))
    ap.add_argument("--model", default="yolov5s", choices=["resnet18", "yolov5s"])
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--depth", type=int, default=2, help="module path parts per row")
    args = ap.parse_args()
    onnx = os.path.join(ORT_DIR, args.model + ".onnx")
    if not os.path.exists(onnx):
        sys.exit("profile_vs_ort: %s not found: run tools/bench_vs_torch.py --peers ort once" % onnx)
    shape = ",".join(map(str, (args.batch,) + tuple(MODELS[args.model].input_shape[1:])))
    engine, ort = [], []
    for _ in range(args.rounds):
        out = subprocess.run([args.kuiper, "bench", args.model, "--batch", str(args.batch),
                              "--threads", str(args.threads), "--runs", str(args.runs),
                              "--profile"], capture_output=True, text=True, check=True).stdout
        engine.append(per_module(out, args.depth))
        out = subprocess.run(["node", os.path.join(ROOT, "tools", "ort_bench.js"), onnx, shape,
                              str(args.threads), "2", str(args.runs), "--profile"],
                             capture_output=True, text=True, check=True, cwd=ORT_DIR).stdout
        ort.append(per_module(out, args.depth))
    print("%s batch %d, %d threads, %d rounds; per image (median of each round): engine %s, "
          "ONNX Runtime %s" % (args.model, args.batch, args.threads, args.rounds,
                               " ".join("%.1f" % m for _, m in engine),
                               " ".join("%.1f" % m for _, m in ort)))

    def median(rounds, module):
        return statistics.median(times.get(module, 0.0) for times, _ in rounds)

    names = set().union(*(times for times, _ in engine + ort))
    rows = sorted(((median(engine, n), median(ort, n), n) for n in names),
                  key=lambda row: (-row[1], -row[0]))
    print("%-28s %10s %10s %10s" % ("module", "engine ms", "ORT ms", "difference"))
    for e, o, name in rows:
        print("%-28s %10.3f %10.3f %+10.3f" % (name, e, o, e - o))
    total_e, total_o = sum(r[0] for r in rows), sum(r[1] for r in rows)
    print("%-28s %10.3f %10.3f %+10.3f" % ("sum of the medians", total_e, total_o, total_e - total_o))


if __name__ == "__main__":
    main()
