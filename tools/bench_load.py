#!/usr/bin/python3
"""Times the engine and its peers side by side while other processes load the machine.

    /usr/bin/python3 tools/bench_load.py [--models resnet18,yolov5s] [--loads 0,1,2]
        [--rounds 3] [--runs 10] [--warmup 2] [--batch 1] [--threads 2]
        [--kuiper [NAME=]PATH ...] [--peers ort,torch,ncnn] [--ncnn-bench PATH]

A laptop or a shared server is never idle, and an engine whose waiting threads
spin can fall far behind its own single thread there. For each load N in
--loads this script starts N shell loops that compile one of the engine's
sources (kuiper/src/layer/convolution.cpp) with `g++ -O2` again and again; a
pure spin loop does not reproduce the problem, a compiler does (it sleeps on
I/O and wakes up, so the scheduler keeps moving the benchmark's threads). Under
that load it alternates, --rounds times and in a rotating order:
- `kuiper bench MODEL --threads T` and `--threads 1` for every --kuiper build
  (default build/solutions/bin/kuiper; give --kuiper twice, optionally as
  NAME=PATH, to compare two builds under the same load);
- the peers, all with T threads: ort (ONNX Runtime, tools/ort_bench.js), torch
  (PyTorch, in a child process of this script, BatchNorm folded) and ncnn
  (tools/ncnn_bench.cpp, fp32; skipped with a message when its runner or the
  converted model is missing: see tools/ncnn_models.py, --ncnn-bench or
  $KUIPER_NCNN_BENCH).
Every runner is a process of its own, started under `/usr/bin/time -f %M`,
which gives its peak resident memory (for torch that includes the Python
interpreter and PyTorch itself, for ORT Node.js).

It prints, under the CPU line of tools/bench_vs_torch.py, one row per model,
load and runner: median and p90 ms per image (each the median over the rounds
of that round's value), the largest peak RSS over the rounds, and the ratio to
ONNX Runtime (median over the rounds of the per-round ratio of medians; each
round's ratio in brackets). Then, per model, load and build, `--threads T`
against `--threads 1`: the ratio of the medians and of the p90s.

The load loops run in a process group of their own, killed when a load level
is done and on any exit (Ctrl-C, an error, SIGTERM). Their objects go to a
temporary folder. The engine finds its models as `kuiper bench` does
($KUIPER_MODELS or <repository>/build/models, tools/make_models.py writes them).
"""
import argparse
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

import torch

import bench_vs_torch as bvt
from bench_vs_torch import ROOT
from models import MODELS

TIME = "/usr/bin/time"
LOAD_SOURCE = os.path.join("kuiper", "src", "layer", "convolution.cpp")


def load_command(out):
    """One compile of the engine's convolution source, as the load loops repeat it."""
    return ["g++", "-O2", "-std=c++20", "-fopenmp", "-I" + os.path.join(ROOT, "kuiper", "include"),
            "-I" + os.path.join(ROOT, "kuiper", "src"), "-c", os.path.join(ROOT, LOAD_SOURCE),
            "-o", out]


class Load:
    """N shell loops of load_command, in a process group of their own."""

    def __init__(self, count, workdir):
        self.count, self.workdir, self.proc = count, workdir, None

    def __enter__(self):
        if self.count:
            loops = " ".join(
                "(while :; do %s; done) &"
                % " ".join(load_command(os.path.join(self.workdir, "load%d.o" % i)))
                for i in range(self.count))
            # A group of its own: Ctrl-C does not reach it, so __exit__ must end it, and
            # killpg ends the loops and the compilers they started in one call.
            self.proc = subprocess.Popen(["bash", "-c", loops + " wait"], start_new_session=True,
                                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return self

    def __exit__(self, *exc):
        self.stop()

    def stop(self):
        if self.proc is None:
            return
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait()
        self.proc = None


def check_load(workdir):
    """Seconds one compile of the load takes on its own; exits when it does not compile."""
    start = time.perf_counter()
    proc = subprocess.run(load_command(os.path.join(workdir, "check.o")), capture_output=True,
                          text=True)
    if proc.returncode != 0:
        sys.exit("bench_load: the load's compile fails:\n" + proc.stderr[-2000:])
    return time.perf_counter() - start


def timed(cmd, workdir, cwd=None):
    """(median, p90, peak RSS in MB or None) of a command printing 'per image: median ...'."""
    if not os.access(TIME, os.X_OK):
        return bvt.median_line(cmd, cwd) + (None,)
    rss_file = os.path.join(workdir, "rss")
    median, p90 = bvt.median_line([TIME, "-f", "%M", "-o", rss_file] + cmd, cwd)
    with open(rss_file) as f:
        return median, p90, int(f.read().split()[-1]) / 1024


def parse_builds(values):
    """--kuiper [NAME=]PATH, repeatable -> [(name, path)]."""
    values = values or [os.path.join(ROOT, "build", "solutions", "bin", "kuiper")]
    builds = []
    for i, value in enumerate(values):
        name, sep, path = value.partition("=")
        if not sep:
            name, path = ("kuiper" if len(values) == 1 else "kuiper%d" % (i + 1)), value
        if not os.access(path, os.X_OK):
            sys.exit("bench_load: %s not found: build it with cmake --preset solutions && "
                     "cmake --build --preset solutions --target kuiper" % path)
        builds.append((name, path))
    return builds


def runners_for(name, spec, args, builds, peers):
    """[(label, command, cwd)] for one model: every build at T and 1 thread, then the peers."""
    shape = (args.batch,) + tuple(spec.input_shape[1:])
    common = [str(args.warmup), str(args.runs)]
    runners = []
    for build, path in builds:
        for threads in (args.threads, 1):
            runners.append(("%s t%d" % (build, threads),
                            [path, "bench", name, "--batch", str(args.batch), "--threads",
                             str(threads), "--warmup", str(args.warmup), "--runs", str(args.runs)],
                            None))
    if "ort" in peers:
        onnx_path = bvt.ort_model(name, spec.build(), spec.input_shape)
        runners.append(("ORT", ["node", os.path.join(ROOT, "tools", "ort_bench.js"), onnx_path,
                                ",".join(map(str, shape)), str(args.threads)] + common,
                        bvt.ORT_DIR))
    if "torch" in peers:
        runners.append(("PyTorch", [sys.executable, os.path.abspath(__file__), "--torch-child",
                                    name, "--threads", str(args.threads), "--batch",
                                    str(args.batch), "--warmup", str(args.warmup), "--runs",
                                    str(args.runs)], None))
    if "ncnn" in peers:
        files = bvt.ncnn_files(name, args.ncnn_bench)
        if files:
            runners.append(("ncnn", bvt.ncnn_command(files, shape, args.threads, args.warmup,
                                                     args.runs), None))
    return runners


def torch_child(args):
    """--torch-child: PyTorch's timing in a process of its own, so its RSS is its own."""
    torch.set_num_threads(args.threads)
    spec = MODELS[args.torch_child]
    model = bvt.fold_batchnorm(spec.build(), torch.rand(*spec.input_shape))
    median, p90 = bvt.torch_ms(model, (args.batch,) + tuple(spec.input_shape[1:]), args.warmup,
                               args.runs)
    print("per image: median %.3f ms, p90 %.3f ms" % (median, p90))
    return 0


def report(rows, builds, args, start, compile_s):
    print(bvt.machine_line(start))
    print("load N: N shell loops compiling %s with g++ -O2 again and again (one compile alone: "
          "%.1f s); batch %d, %d rounds of %d warm-up + %d timed runs each, runners alternated"
          % (LOAD_SOURCE, compile_s, args.batch, args.rounds, args.warmup, args.runs))
    print("ms per image (median and p90: medians over the rounds), peak RSS MB (max over the "
          "rounds), ratio of medians to ORT (median, and each round)")
    print("%-9s %4s  %-14s %9s %9s %8s  %s" % ("model", "load", "runner", "median", "p90",
                                                "RSS MB", "/ORT (rounds)"))
    for name, load, labels, rounds in rows:
        for label in labels:
            med = statistics.median(r[label][0] for r in rounds)
            p90 = statistics.median(r[label][1] for r in rounds)
            rss = [r[label][2] for r in rounds if r[label][2] is not None]
            line = "%-9s %4d  %-14s %9.2f %9.2f %8s" % (
                name, load, label, med, p90, "%.0f" % max(rss) if rss else "n/a")
            if "ORT" in labels and label != "ORT":
                ratios = [r[label][0] / r["ORT"][0] for r in rounds]
                line += "  %5.2fx (%s)" % (statistics.median(ratios),
                                           " ".join("%.2f" % x for x in ratios))
            print(line)
    print("threads %d / threads 1, same build and load: ratio of medians, ratio of p90s"
          % args.threads)
    for name, load, labels, rounds in rows:
        for build, _ in builds:
            many, one = "%s t%d" % (build, args.threads), "%s t1" % build
            ratio = [statistics.median(r[many][k] for r in rounds)
                     / statistics.median(r[one][k] for r in rounds) for k in (0, 1)]
            print("%-9s %4d  %-14s median %5.2fx  p90 %5.2fx" % (name, load, build, *ratio))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kuiper", action="append", metavar="[NAME=]PATH",
                    help="an engine build to time (repeat to compare builds)")
    ap.add_argument("--models", default="resnet18,yolov5s")
    ap.add_argument("--loads", default="0,1,2", help="numbers of load loops, one level each")
    ap.add_argument("--rounds", type=int, default=3, help="turns each runner takes per load")
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--threads", type=int, default=2, help="threads of the engine and the peers")
    ap.add_argument("--peers", default="ort,torch,ncnn", help="any of ort, torch, ncnn")
    ap.add_argument("--ncnn-bench", default=None,
                    help="ncnn runner, its models beside it (default $KUIPER_NCNN_BENCH or "
                         "build/ncnn/ncnn_bench)")
    ap.add_argument("--settle", type=float, default=3.0,
                    help="seconds between starting the load and the first run")
    ap.add_argument("--torch-child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.torch_child:
        return torch_child(args)

    start = time.gmtime()
    peers = [p for p in args.peers.split(",") if p]
    if set(peers) - {"ort", "torch", "ncnn"}:
        sys.exit("bench_load: --peers takes any of ort, torch, ncnn")
    builds = parse_builds(args.kuiper)
    if "ort" in peers:
        bvt.ort_setup()
    if not os.access(TIME, os.X_OK):
        print("bench_load: %s missing (Debian package `time`): no peak RSS" % TIME,
              file=sys.stderr)
    # SIGTERM ends the script like Ctrl-C does, through the finally blocks that stop the load.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("bench_load: terminated"))

    workdir = tempfile.mkdtemp(prefix="bench_load_")
    try:
        compile_s = check_load(workdir)
        models = args.models.split(",")
        runners = {name: runners_for(name, MODELS[name], args, builds, peers) for name in models}
        rows = []
        for load in (int(n) for n in args.loads.split(",")):
            with Load(load, workdir):
                time.sleep(args.settle if load else 0)
                for name in models:
                    rounds = []
                    for r in range(args.rounds):
                        turn = runners[name][r % len(runners[name]):] + runners[name][
                            :r % len(runners[name])]
                        rounds.append({label: timed(cmd, workdir, cwd) for label, cmd, cwd in turn})
                    labels = [label for label, _, _ in runners[name]]
                    rows.append((name, load, labels, rounds))
                    print("measured %s under load %d: %s" % (name, load, "; ".join(
                        "%s %s" % (label, " ".join("%.1f" % r[label][0] for r in rounds))
                        for label in labels)), file=sys.stderr, flush=True)
        report(rows, builds, args, start, compile_s)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
