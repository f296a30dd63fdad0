#!/usr/bin/python3
"""The ONNX zoo's models through the project's own PNNX exporter and `kuiper run`.

    /usr/bin/python3 tools/pnnx_zoo.py [--kuiper build/solutions/bin/kuiper]
                                       [--out build/models/pnnx_zoo] [--only NAME ...]
                                       [--export-only] [--force] [--table FILE]

For every model of tools/export_onnx_zoo.py (torchvision resnet18,
mobilenet_v2, mobilenet_v3_small, squeezenet1_1, shufflenet_v2_x0_5,
efficientnet_b0, the small UNet, the project's YOLOv5s, and YOLOv5s with its
Detect head traced into: VARIANTS) this writes
<out>/<model>/ with model.pnnx.param and model.pnnx.bin (tools/pnnx_export.py,
BatchNorm folded into the convolutions as pnnx does), input.npy, output.npy
(PyTorch's float32 output) and output_fp64.npy (the same model in float64).
The weights, BatchNorm statistics and input are the ONNX zoo's own
(export_onnx_zoo.seeded_model), so the two zoos check the same networks.

Then each entry runs as `kuiper run model.pnnx.param input.npy -o out.npy` and
is compared with PyTorch by tools/onnx_zoo_check.py's rule and code: max abs
diff within 1e-5 * max(1, max|ref|), or, where PyTorch's own float32 result is
too far from the float64 one for that, the engine within the same bound of
output_fp64.npy, or about as far from it as PyTorch's float32 ("runs (fp64)").

A model the exporter cannot express is listed in NOT_EXPRESSIBLE with the
reason, and the exporter must still refuse it with that text (a model that
starts to export is reported, so the list stays true). Exit status 0 when
every entry behaves as listed. --export-only writes the files and stops
(the build's `pnnx_zoo` target); entries whose files were written by this
version of the scripts are not exported again unless --force.
"""
import argparse
import copy
import hashlib
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
sys.path.insert(0, ROOT)

# More entries: entry -> (model, options of pnnx_export.export). YOLOv5s's
# Detect head is written as one models.yolo.Detect operator by default (pnnx's
# `moduleop` form); traced into, it is the graph the real pnnx writes without
# moduleop: Tensor.view to 5-D, Tensor.permute, F.sigmoid, Tensor.slice,
# pnnx.Attribute grids and anchors, pnnx.Expression with pow on 5-D operands.
# And BatchNorm kept as nn.BatchNorm2d (fold_bn=False), which the real pnnx
# never writes but a hand-made file may: the engine's own BatchNorm layer.
VARIANTS = {
    "yolov5s_detect_traced": ("yolov5s", {"moduleop": False}),
    "resnet18_bn_unfolded": ("resnet18", {"fold_bn": False}),
}

# entry -> a text the exporter's refusal must contain, and why (docs/onnx.md §9).
# Empty today: every model of the zoo exports.
NOT_EXPRESSIBLE = {
}

# The files that decide an entry's content: an entry written by other
# versions is out of date.
SOURCES = ("tools/pnnx_zoo.py", "tools/pnnx_export.py", "tools/export_onnx_zoo.py",
           "models/yolov5s.py")


def script_hash():
    digest = hashlib.sha256()
    for path in SOURCES:
        with open(os.path.join(ROOT, path), "rb") as f:
            digest.update(f.read())
    return digest.hexdigest()


def entries():
    """entry -> (model of export_onnx_zoo.MODELS, export options)."""
    import export_onnx_zoo
    table = {name: (name, {}) for name in export_onnx_zoo.MODELS}
    table.update(VARIANTS)
    return table


def export(name, out_dir, force):
    """Writes the entry's files; returns a short status text. Raises what the
    exporter raises for a model it cannot express."""
    import numpy as np
    import torch
    import export_onnx_zoo
    import pnnx_export

    folder = os.path.join(out_dir, name)
    stamp = os.path.join(folder, "exporter.sha256")
    files = ("model.pnnx.param", "model.pnnx.bin", "input.npy", "output.npy", "output_fp64.npy")
    if (not force and os.path.exists(stamp) and open(stamp).read() == script_hash()
            and all(os.path.exists(os.path.join(folder, f)) for f in files)):
        return "up to date"
    os.makedirs(folder, exist_ok=True)
    if os.path.exists(stamp):
        os.remove(stamp)
    model_name, options = entries()[name]
    model, x, _ = export_onnx_zoo.seeded_model(model_name)
    with torch.no_grad():
        y = model(x)
        y64 = copy.deepcopy(model).double()(x.double())
        pnnx_export.export(model, (x,), os.path.join(folder, "model.pnnx.param"),
                           os.path.join(folder, "model.pnnx.bin"), **options)
    np.save(os.path.join(folder, "input.npy"), x.numpy().astype(np.float32))
    np.save(os.path.join(folder, "output.npy"), y.numpy().astype(np.float32))
    np.save(os.path.join(folder, "output_fp64.npy"), y64.numpy())
    with open(stamp, "w") as f:  # last: an interrupted export is redone
        f.write(script_hash())
    return "exported, max|ref| %.3g" % float(y.abs().max())


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kuiper", default=os.path.join(ROOT, "build", "solutions", "bin",
                                                         "kuiper"))
    parser.add_argument("--out", default=os.path.join(ROOT, "build", "models", "pnnx_zoo"))
    parser.add_argument("--only", nargs="*", help="models to export and run (default: all)")
    parser.add_argument("--export-only", action="store_true", help="write the files and stop")
    parser.add_argument("--force", action="store_true", help="export even what is up to date")
    parser.add_argument("--table", help="write a Markdown table of the results here")
    args = parser.parse_args()

    import torch
    import onnx_zoo_check

    torch.set_num_threads(1)  # the machine is shared; these models are small
    table = entries()
    names = args.only or list(table)
    unknown = [n for n in names if n not in table]
    if unknown:
        parser.error("unknown entries: %s (the zoo: %s)" % (", ".join(unknown), ", ".join(table)))
    rows, problems = [], []
    for name in names:
        expected = NOT_EXPRESSIBLE.get(name)
        try:
            status = export(name, args.out, args.force)
            error = None
        except NotImplementedError as e:
            status, error = "not expressible", str(e)
        if error is None and expected:
            problems.append("%s exports now: remove it from NOT_EXPRESSIBLE and docs/onnx.md" %
                            name)
        elif error is not None and not (expected and expected in error):
            problems.append("%s: the exporter refuses it: %s" % (name, error))
        if args.export_only or error is not None:
            print("%-22s %s%s" % (name, status, "" if error is None else ": " + error), flush=True)
            rows.append((name, status, "-", "-", error or ""))
            continue
        ok, diff, allowed, text = onnx_zoo_check.check(args.kuiper, os.path.join(args.out, name),
                                                        model="model.pnnx.param")
        if ok:
            status = "runs (fp64)" if text.startswith("fp64") else "runs"
        else:
            status = "FAILS"
            problems.append("%s: %s" % (name, text or "max abs diff %.3g > %.3g" % (diff, allowed)))
        shown = "-" if diff is None else "%.3g" % diff
        limit = "-" if allowed is None else "%.3g" % allowed
        print("%-22s %-12s max abs diff %-9s (allowed %s) %s" %
              (name, status, shown, limit, text.splitlines()[-1] if text else ""), flush=True)
        rows.append((name, status, shown, limit, text))
    if args.table:
        header = ("model", "status", "max abs diff vs PyTorch", "allowed", "note")
        onnx_zoo_check.write_table(args.table, header, rows)
    for problem in problems:
        print("PROBLEM:", problem)
    if not args.export_only:
        print("%d models, %d run, %d problems" %
              (len(rows), sum(r[1].startswith("runs") for r in rows), len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
