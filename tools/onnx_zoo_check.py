#!/usr/bin/python3
"""Run every entry of the ONNX zoo through `kuiper run` and compare with PyTorch.

    /usr/bin/python3 tools/onnx_zoo_check.py --kuiper build/solutions/bin/kuiper
                                             [--zoo build/models/onnx] [--only NAME ...]
                                             [--export] [--table FILE]

For each entry of tools/export_onnx_zoo.py: `kuiper run model.onnx input.npy
-o out.npy`, then max|out - output.npy| against 1e-5 * max(1, max|output.npy|).
When PyTorch's float32 output is itself too far from the exact result for
that (its error and the engine's add up), the entry still passes, reported as
"runs (fp64)" with both distances, if the engine's output is within the same
bound of output_fp64.npy (the model run in float64), or if it is about as far
from output_fp64.npy as PyTorch's float32 output is: its rms distance at most
1.5 times PyTorch's and its largest at most twice PyTorch's largest. (A
largest error is one element: YOLOv5s's box sizes, (2 sigmoid(t))^2 anchor,
magnify the rounding of t. Over 12 inputs of the zoo's YOLOv5s on one machine
the engine's largest error from float64 was 0.46 to 2.34 times PyTorch's and
its rms 0.70 to 1.72 times; the fixed bound failed PyTorch's own float32 on 5
of them, this rule the engine on 1. docs/onnx.md §8.)
An entry listed in KNOWN_FAILURES must still fail, with its error containing
the text given there (docs/onnx.md lists the same entries and reasons): a
known failure that starts to run, or fails otherwise, is reported so that the
list and the documentation are brought up to date. Exit status 0 when every
entry behaves as listed. --export first exports missing entries.
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))

# entry prefix -> a text the CLI's error must contain. Why each fails: docs/onnx.md §8.
KNOWN_FAILURES = {
}


# The float64 rule's second form: the engine as far from float64 as PyTorch's
# float32, within these factors (rms distance, largest distance).
FP64_RMS_RATIO = 1.5
FP64_MAX_RATIO = 2.0


def known_failure(entry):
    for prefix, text in KNOWN_FAILURES.items():
        if entry.startswith(prefix):
            return text
    return None


def check(kuiper, folder, flags=(), model="model.onnx"):
    """Every input*.npy / output*.npy pair of the entry (input.npy, and e.g.
    input_b3.npy at another batch), `kuiper run` given `flags`: (ok, worst max
    abs diff or None, its allowed diff or None, error text). `model` is the
    file in `folder` to run (tools/pnnx_zoo.py: model.pnnx.param)."""
    suffixes = sorted(f[len("input"):-len(".npy")] for f in os.listdir(folder)
                      if f.startswith("input") and f.endswith(".npy"))
    worst = (True, 0.0, None, "")
    for suffix in suffixes:
        result = check_pair(kuiper, folder, suffix, flags, model)
        if not result[0]:
            return result
        if worst[2] is None or result[1] / result[2] > worst[1] / worst[2]:
            worst = result
    return worst


def check_pair(kuiper, folder, suffix, flags, model="model.onnx"):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out.npy")
        run = subprocess.run([kuiper, "run", os.path.join(folder, model),
                              os.path.join(folder, "input%s.npy" % suffix), "-o", out] +
                             list(flags),
                             capture_output=True, text=True, timeout=300)
        if run.returncode != 0:
            return False, None, None, (run.stderr or run.stdout).strip()
        got = np.load(out)
    ref = np.load(os.path.join(folder, "output%s.npy" % suffix))
    exact = os.path.join(folder, "output_fp64%s.npy" % suffix)
    return compare(got, ref, np.load(exact) if os.path.exists(exact) else None)


def compare(got, ref, y64=None):
    """The rule of the module's docstring for the engine's output `got`,
    PyTorch's float32 `ref` and, when there is one, the float64 `y64`: (ok,
    max abs diff, allowed diff, text; text is "fp64: ..." when the float64
    rule passed the entry)."""
    allowed = 1e-5 * max(1.0, float(np.abs(ref).max()))
    if got.shape != ref.shape:
        return False, None, allowed, "output shape %s, PyTorch's %s" % (got.shape, ref.shape)
    if not np.isfinite(got).all():
        return False, float("inf"), allowed, ""
    diff = float(np.abs(got.astype(np.float64) - ref).max())
    if diff > allowed and y64 is not None:
        engine, torch = np.abs(got - y64), np.abs(ref - y64)
        text = "fp64: engine %.3g, PyTorch %.3g from float64 (rms %.3g, %.3g)" % (
            engine.max(), torch.max(), rms(engine), rms(torch))
        if engine.max() <= allowed or (rms(engine) <= FP64_RMS_RATIO * rms(torch) and
                                       engine.max() <= FP64_MAX_RATIO * torch.max()):
            return True, diff, allowed, text
    return diff <= allowed, diff, allowed, ""


def rms(values):
    return float(np.sqrt(np.mean(np.square(values, dtype=np.float64))))


def write_table(path, header, rows):
    """A Markdown table at `path`: one column per name in `header`; each row's
    last cell is free text (its pipes escaped, cut at 300 characters)."""
    with open(path, "w") as f:
        f.write("| %s |\n|%s\n" % (" | ".join(header), "---|" * len(header)))
        for row in rows:
            cells = list(row[:-1]) + [row[-1].replace("|", "\\|")[:300]]
            f.write("| %s |\n" % " | ".join(cells))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kuiper", required=True, help="the kuiper CLI")
    parser.add_argument("--zoo", default=os.path.join(ROOT, "build", "models", "onnx"))
    parser.add_argument("--only", nargs="*")
    parser.add_argument("--export", action="store_true", help="export missing entries first")
    parser.add_argument("--table", help="write a Markdown table of the results here")
    args = parser.parse_args()
    import export_onnx_zoo  # noqa: E402 (imports torch: only here)
    entries = args.only or list(export_onnx_zoo.entries())
    if args.export:
        subprocess.run([sys.executable, os.path.join(ROOT, "tools", "export_onnx_zoo.py"),
                        "--out", args.zoo, "--only"] + entries, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    rows, problems = [], []
    table = export_onnx_zoo.entries()
    # YOLOv5s's Detect head is fused by default; it must run node by node too.
    runs = [(entry, ()) for entry in entries]
    runs += [(entry, ("--no-fuse",)) for entry in entries if table[entry][0] == "yolov5s"]
    for entry, flags in runs:
        ok, diff, allowed, error = check(args.kuiper, os.path.join(args.zoo, entry), flags)
        entry = " ".join((entry,) + flags)
        expected = known_failure(entry)
        if ok:
            status = "runs (fp64)" if error.startswith("fp64") else "runs"
            if expected:
                problems.append("%s runs now: remove it from KNOWN_FAILURES and docs/onnx.md" %
                                entry)
        elif expected and diff is None and expected in error:
            status = "known failure"
        else:
            status = "FAILS"
            problems.append("%s: %s" % (entry, error or "max abs diff %.3g > %.3g" %
                                        (diff, allowed)))
        shown = "-" if diff is None else "%.3g" % diff
        print("%-32s %-14s max abs diff %-9s (allowed %s) %s" %
              (entry, status, shown, "-" if allowed is None else "%.3g" % allowed,
               error.splitlines()[-1] if error else ""), flush=True)
        rows.append((entry, status, shown, error))
    if args.table:
        write_table(args.table, ("entry", "status", "max abs diff vs PyTorch", "error"), rows)
    for problem in problems:
        print("PROBLEM:", problem)
    print("%d entries, %d run, %d problems" %
          (len(rows), sum(r[1].startswith("runs") for r in rows), len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
