#!/usr/bin/env python3
"""A/B timing of two engine builds on one model, alternated.

    python3 tools/bench_ab.py BASE_KUIPER NEW_KUIPER MODEL [--rounds 10] [--runs 10]
                              [--threads 2] [--batch 1]

Runs `kuiper bench MODEL` with BASE and NEW in turn (A B, then B A, ...) and
prints each round's medians and NEW/BASE ratio, then the median of the
ratios. On a shared machine the same build moves by 10-20% from minute to
minute; a ratio taken within one round, and its median over rounds, is what
stays put. MODEL is a model name or path, as `kuiper bench` takes it (give a
path when the two builds live in different trees). Build BASE from another
checkout, e.g. `git worktree add ../base HEAD~1` and its own build directory.
"""
import argparse
import re
import statistics
import subprocess
import sys


def median_ms(kuiper, args):
    """The per-image median that one `kuiper bench` run prints."""
    cmd = [kuiper, "bench", args.model, "--threads", str(args.threads), "--batch",
           str(args.batch), "--runs", str(args.runs)]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True)
    except OSError as error:
        sys.exit("bench_ab: cannot run %s: %s" % (kuiper, error.strerror))
    found = re.search(r"median ([0-9.]+) ms", done.stdout + done.stderr)
    if done.returncode != 0 or not found:
        sys.exit("bench_ab: %s failed:\n%s%s" % (" ".join(cmd), done.stdout, done.stderr))
    return float(found.group(1))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("base", help="the kuiper binary to compare against")
    parser.add_argument("new", help="the kuiper binary under test")
    parser.add_argument("model", help="model name or .pnnx.param/.onnx path")
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--runs", type=int, default=10, help="timed runs per bench")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--batch", type=int, default=1)
    args = parser.parse_args()
    ratios, base_ms, new_ms = [], [], []
    for r in range(args.rounds):
        order = ("base", "new") if r % 2 == 0 else ("new", "base")
        times = {which: median_ms(getattr(args, which), args) for which in order}
        base_ms.append(times["base"])
        new_ms.append(times["new"])
        ratios.append(times["new"] / times["base"])
        print("round %2d: base %8.3f ms  new %8.3f ms  new/base %.3f" %
              (r + 1, times["base"], times["new"], ratios[-1]), flush=True)
    print("median over %d rounds: base %.3f ms, new %.3f ms, new/base %.3f (rounds %.3f-%.3f)" %
          (args.rounds, statistics.median(base_ms), statistics.median(new_ms),
           statistics.median(ratios), min(ratios), max(ratios)))


if __name__ == "__main__":
    main()
