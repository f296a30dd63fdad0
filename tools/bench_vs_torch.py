#!/usr/bin/python3
"""Times the engine against PyTorch and ONNX Runtime on the same seeded models, in one run.

    /usr/bin/python3 tools/bench_vs_torch.py [--threads 2] [--runs 10] [--warmup 2]
        [--rounds 3] [--batches 1,4] [--models resnet18,yolov5s] [--peers torch,ort,ncnn[,ncnn23]]
        [--kuiper build/solutions/bin/kuiper] [--no-fold-bn] [--ncnn-bench PATH]

For each model (ResNet18 at 224, YOLOv5s at 640) and batch size it runs
`kuiper bench MODEL --batch N --threads T` (parsing its "per image: median ..."
line), then each peer on a random input of the same shape, with the same
warm-up and run counts and T threads, and prints median milliseconds per image
and the engine / peer ratios, under a line that says when and on which CPU
(the ratios depend on it). The peers:
- torch: the same PyTorch module from models/, torch.set_num_threads(T);
- ort: ONNX Runtime (npm onnxruntime-node, CPU, every graph optimisation on,
  T intra-op threads) on the module exported by torch.onnx.export with a
  dynamic batch axis, run by tools/ort_bench.js under Node. The first run
  installs the package into build/ort (`npm install --ignore-scripts`; its
  install script would fetch GPU files) and exports the models there. Neither
  is a build or test dependency of the project.
- ncnn: Tencent's ncnn (CPU, fp32: fp16 and bf16 storage and arithmetic off,
  T threads) on the same model, converted by tools/ncnn_models.py (by the
  real pnnx, or from the engine's own PNNX files operator for operator) and
  checked against PyTorch there, run by tools/ncnn_bench.cpp. The runner and
  the models <name>.ncnn.{param,bin} sit in one folder: --ncnn-bench PATH,
  else $KUIPER_NCNN_BENCH, else build/ncnn/ncnn_bench. tools/ncnn_models.py
  says how to build ncnn and writes that folder. Without them ncnn is
  skipped, with a message. ncnn has no batch axis: at batch N it runs N
  images one after the other.
- ncnn23: the same ncnn with its 3x3 stride-1 layers kept to Winograd's
  F(2x2, 3x3) (ncnn_bench --winograd 23), the rounding the engine keeps by
  default; as it ships, ncnn picks F(4x4, 3x3) or F(6x6, 3x3) by shape, and
  rounds more (docs/performance.md#ncnn-winograd). Not in the default peers.
All sides take turns, --rounds times: on a shared machine the speed of the
cores drifts by 10-20% over minutes, and each round's ratios compare runs made
close together. The table gives the medians over the rounds.
PyTorch runs the module with each BatchNorm folded into the convolution before
it, as the exported model the engine runs has them (--no-fold-bn: the module
as written); ONNX Runtime folds them itself.
The engine needs the generated models (/usr/bin/python3 tools/make_models.py).
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import time

import torch
from torch.nn.utils.fusion import fuse_conv_bn_eval

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from models import MODELS  # noqa: E402
from pnnx_export import trace  # noqa: E402

MEDIAN_LINE = re.compile(r"per image: median ([0-9.]+) ms, p90 ([0-9.]+) ms")
ORT_DIR = os.path.join(ROOT, "build", "ort")
NCNN_BENCH = os.path.join(ROOT, "build", "ncnn", "ncnn_bench")


def machine_line(start):
    """When and on which CPU the table was measured: the engine's ratio to a peer
    is a property of the CPU too (final_project/README.md, "How fast")."""
    info = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                info.setdefault(key.strip(), value.strip())
    except OSError:
        pass
    avx512 = "avx512f" in info.get("flags", "").split()
    return "%s-%s UTC, cpu: %s (family %s, model %s), %s, %d logical CPUs" % (
        time.strftime("%Y-%m-%d %H:%M", start), time.strftime("%H:%M", time.gmtime()),
        info.get("model name", "unknown"),
        info.get("cpu family", "?"), info.get("model", "?"),
        "AVX-512" if avx512 else "no AVX-512", os.cpu_count() or 0)


def median_line(cmd, cwd=None):
    """(median, p90) ms per image from a command that prints 'per image: median ...'."""
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd)
    if proc.returncode != 0:
        sys.exit("bench_vs_torch: %s failed: %s" % (" ".join(cmd), proc.stderr.strip()))
    match = MEDIAN_LINE.search(proc.stdout)
    if not match:
        sys.exit("bench_vs_torch: no 'per image: median' line in:\n" + proc.stdout)
    return float(match.group(1)), float(match.group(2))


def engine_ms(kuiper, model, batch, threads, warmup, runs, conv_route="default"):
    """(median, p90) ms per image from `kuiper bench`."""
    return median_line([kuiper, "bench", model, "--batch", str(batch), "--threads", str(threads),
                        "--warmup", str(warmup), "--runs", str(runs), "--conv-route", conv_route])


def ort_setup():
    """Installs onnxruntime-node into build/ort once (its install script skipped)."""
    if os.path.isdir(os.path.join(ORT_DIR, "node_modules", "onnxruntime-node")):
        return
    os.makedirs(ORT_DIR, exist_ok=True)
    print("installing onnxruntime-node into %s" % ORT_DIR, file=sys.stderr, flush=True)
    for cmd in (["npm", "init", "-y"], ["npm", "install", "--ignore-scripts", "onnxruntime-node"]):
        if subprocess.run(cmd, cwd=ORT_DIR, stdout=subprocess.DEVNULL).returncode != 0:
            sys.exit("bench_vs_torch: %s failed in %s (is Node.js/npm installed?)"
                     % (" ".join(cmd), ORT_DIR))


def ort_model(name, model, input_shape):
    """build/ort/NAME.onnx: the module as torch.onnx.export writes it, batch axis dynamic."""
    path = os.path.join(ORT_DIR, name + ".onnx")
    if not os.path.exists(path):
        with torch.no_grad():
            torch.onnx.export(model, (torch.rand(*input_shape),), path, opset_version=13,
                              input_names=["input"], output_names=["output"],
                              dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}})
    return path


def ort_ms(onnx_path, shape, threads, warmup, runs):
    """(median, p90) ms per image from tools/ort_bench.js."""
    return median_line(["node", os.path.join(ROOT, "tools", "ort_bench.js"), onnx_path,
                        ",".join(map(str, shape)), str(threads), str(warmup), str(runs)],
                       cwd=ORT_DIR)


def ncnn_files(name, bench=None):
    """(runner, .param, .bin) for model `name`, or None (said on stderr) when one is missing."""
    bench = bench or os.environ.get("KUIPER_NCNN_BENCH") or NCNN_BENCH
    folder = os.path.dirname(os.path.abspath(bench))
    files = (bench, os.path.join(folder, name + ".ncnn.param"),
             os.path.join(folder, name + ".ncnn.bin"))
    missing = [f for f in files if not os.path.exists(f)]
    if missing:
        print("skipping ncnn for %s: %s missing (tools/ncnn_models.py builds the runner and "
              "converts the models)" % (name, ", ".join(missing)), file=sys.stderr, flush=True)
        return None
    return files


# The ncnn peers: ncnn as it ships, and ncnn with its 3x3 stride-1 layers kept to Winograd's
# F(2x2, 3x3), the rounding the engine keeps (tools/ncnn_bench.cpp's --winograd 23).
NCNN_PEERS = {"ncnn": [], "ncnn23": ["--winograd", "23"]}


def ncnn_command(files, shape, threads, warmup, runs, peer="ncnn"):
    """tools/ncnn_bench.cpp's command line: one image of shape[1:] at a time, shape[0] per run."""
    bench, param, weights = files
    return [bench, param, weights, ",".join(map(str, shape[1:])), str(threads), str(warmup),
            str(runs), "--batch", str(shape[0])] + NCNN_PEERS[peer]


def ncnn_ms(files, shape, threads, warmup, runs, peer="ncnn"):
    """(median, p90) ms per image from tools/ncnn_bench.cpp."""
    return median_line(ncnn_command(files, shape, threads, warmup, runs, peer))


def fold_batchnorm(model, example):
    """The model as an fx graph with every Conv2d -> BatchNorm2d pair made one
    Conv2d, as the exporter folds them for the engine."""
    gm = trace(model, [example])
    modules = dict(gm.named_modules())
    for node in list(gm.graph.nodes):
        conv = node.args[0] if node.op == "call_module" and node.args else None
        if (isinstance(modules.get(node.target), torch.nn.BatchNorm2d)
                and isinstance(conv, torch.fx.Node) and conv.op == "call_module"
                and isinstance(modules.get(conv.target), torch.nn.Conv2d)
                and len(conv.users) == 1):
            parent, _, leaf = conv.target.rpartition(".")
            setattr(gm.get_submodule(parent) if parent else gm, leaf,
                    fuse_conv_bn_eval(modules[conv.target], modules[node.target]))
            node.replace_all_uses_with(conv)
            gm.graph.erase_node(node)
    gm.recompile()
    with torch.no_grad():
        want = model(example)
        assert torch.allclose(gm(example), want, rtol=0, atol=1e-3 * want.abs().max()), \
            "folding BatchNorm changed the model's output"
    return gm


def torch_ms(model, shape, warmup, runs):
    """(median, p90) ms per image of model(x) for a random x of `shape`."""
    x = torch.rand(*shape)
    times = []
    with torch.no_grad():
        for _ in range(warmup):
            model(x)
        for _ in range(runs):
            start = time.perf_counter()
            model(x)
            times.append((time.perf_counter() - start) * 1000 / shape[0])
    times.sort()
    p90 = statistics.quantiles(times, n=10, method="inclusive")[-1] if len(times) > 1 else times[0]
    return statistics.median(times), p90


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kuiper", default=os.path.join(ROOT, "build", "solutions", "bin", "kuiper"))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--conv-route", default="default", choices=["default", "im2col"],
                    help="the engine's convolution routes (kuiper bench --conv-route)")
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3, help="turns each side takes")
    ap.add_argument("--batches", default="1,4")
    ap.add_argument("--models", default="resnet18,yolov5s")
    ap.add_argument("--peers", default="torch,ort,ncnn",
                    help="any of torch, ort, ncnn, ncnn23 (ncnn on Winograd F(2x2, 3x3) only)")
    ap.add_argument("--ncnn-bench", default=None,
                    help="ncnn runner, its models beside it (default $KUIPER_NCNN_BENCH or "
                         "build/ncnn/ncnn_bench)")
    ap.add_argument("--no-fold-bn", action="store_true",
                    help="time PyTorch's module as written, BatchNorm not folded")
    args = ap.parse_args()
    start = time.gmtime()
    peers = args.peers.split(",")
    if not peers or set(peers) - {"torch", "ort"} - set(NCNN_PEERS):
        sys.exit("bench_vs_torch: --peers takes any of torch, ort, ncnn, ncnn23")
    if "ort" in peers:
        ort_setup()
    if not os.access(args.kuiper, os.X_OK):
        sys.exit("bench_vs_torch: %s not found: build it with cmake --preset solutions && "
                 "cmake --build --preset solutions" % args.kuiper)

    torch.set_num_threads(args.threads)
    batches = [int(b) for b in args.batches.split(",")]
    rows = []
    for name in args.models.split(","):
        spec = MODELS[name]
        model = spec.build()  # the same seeded weights make_models.py exports
        onnx_path = ort_model(name, model, spec.input_shape) if "ort" in peers else None
        ncnn = ncnn_files(name, args.ncnn_bench) if set(peers) & set(NCNN_PEERS) else None
        if "torch" in peers and not args.no_fold_bn:
            model = fold_batchnorm(model, torch.rand(*spec.input_shape))
        for batch in batches:
            shape = (batch,) + tuple(spec.input_shape[1:])
            rounds = []  # per round: {side: (median, p90)}
            for _ in range(args.rounds):
                times = {"kuiper": engine_ms(args.kuiper, name, batch, args.threads, args.warmup,
                                             args.runs, args.conv_route)}
                if "ort" in peers:
                    times["ort"] = ort_ms(onnx_path, shape, args.threads, args.warmup, args.runs)
                if "torch" in peers:
                    times["torch"] = torch_ms(model, shape, args.warmup, args.runs)
                for peer in (p for p in peers if ncnn and p in NCNN_PEERS):
                    times[peer] = ncnn_ms(ncnn, shape, args.threads, args.warmup, args.runs, peer)
                rounds.append(times)
            rows.append((name, "x".join(map(str, shape[1:])), batch, rounds))
            print("measured %s batch %d: %s" % (name, batch, "; ".join(
                "kuiper/%s %s" % (peer, " ".join("%.2f" % (r["kuiper"][0] / r[peer][0])
                                                 for r in rounds))
                for peer in peers if peer in rounds[0])),
                  file=sys.stderr, flush=True)

    sides = ["kuiper"] + peers
    print(machine_line(start))
    label = {"kuiper": "kuiper", "ort": "ORT", "torch": "PyTorch", "ncnn": "ncnn",
             "ncnn23": "ncnn F23"}
    print("threads %d, %d rounds of %d warm-up + %d timed runs each; ms per image (median / p90,"
          " medians over the rounds); PyTorch %s"
          % (args.threads, args.rounds, args.warmup, args.runs,
             "as written" if args.no_fold_bn else "with BatchNorm folded"))
    print("%-9s %-10s %5s" % ("model", "input", "batch")
          + "".join("  %17s" % (label[s] + " ms") for s in sides)
          + "".join("  %-22s" % ("kuiper/" + label[p] + " (rounds)") for p in peers))
    for name, size, batch, rounds in rows:
        line = "%-9s %-10s %5d" % (name, size, batch)
        for side in sides:
            if side not in rounds[0]:  # ncnn without this model
                line += "  %17s" % "n/a"
                continue
            med = statistics.median(r[side][0] for r in rounds)
            p90 = statistics.median(r[side][1] for r in rounds)
            line += "  %8.2f / %6.2f" % (med, p90)
        for peer in peers:
            if peer not in rounds[0]:
                line += "  %-22s" % "n/a"
                continue
            ratios = [r["kuiper"][0] / r[peer][0] for r in rounds]
            line += "  %5.2fx (%s)" % (statistics.median(ratios),
                                       " ".join("%.2f" % x for x in ratios))
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
