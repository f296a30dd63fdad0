#!/usr/bin/python3
"""Models converted by the REAL pnnx (Tencent ncnn's tools/pnnx), run by `kuiper run`.

    /usr/bin/python3 tools/real_pnnx.py --pnnx /path/to/pnnx
        [--kuiper build/solutions/bin/kuiper] [--out build/models/real_pnnx]
        [--only NAME ...] [--table FILE]

pnnx is never a dependency of the project (nothing in CMake or CI needs it):
this script is for checking, by hand, that files written by pnnx itself run,
not only the files our own exporter (tools/pnnx_export.py) writes in imitation.
How to build pnnx against Debian's libtorch-dev: models/README.md, "Real pnnx".

For each entry it writes <out>/<entry>/: model.pt (torch.jit.trace), the files
pnnx writes next to it (model.pnnx.param, model.pnnx.bin, model_pnnx.py),
input.npy, output.npy (PyTorch float32) and output_fp64.npy (the same model in
float64), then runs `kuiper run model.pnnx.param input.npy -o out.npy` and
compares by tools/onnx_zoo_check.py's rule: max abs diff within
1e-5 * max(1, max|ref|) of PyTorch, or, where PyTorch's own float32 result is
too far from float64 for that (YOLOv5s), the engine within that bound of the
float64 output ("runs (fp64)").

Entries:
  tiny_detect        models/tiny.py's tiny_detect (three levels of Detect, 3 classes)
                     on its committed input, plainly and (tiny_detect_moduleop) with
                     moduleop: their pnnx files are committed as models/fixtures/
                     tiny_detect_realpnnx{,_moduleop}.pnnx.*
  tiny_detect_ultralytics  tiny_detect with its head written as Ultralytics' Detect
                     (ultralytics_detect below), plainly and (..._moduleop) with moduleop:
                     the numbered pnnx_0x constants of the moduleop form:
                     models/fixtures/tiny_detect_realpnnx_ultralytics_moduleop.pnnx.*
  tiny_yolo_head     models/tiny_yolo_head.py's module (one level, the split form of
                     Ultralytics' head): models/fixtures/tiny_yolo_head_realpnnx.pnnx.*
  tiny_shuffle_upsample  a conv, a channel shuffle and a bilinear interpolate
                     (TinyShuffleUpsample below; its input and PyTorch output are
                     written once to models/fixtures/tiny_shuffle_upsample.*):
                     models/fixtures/tiny_shuffle_upsample_realpnnx.pnnx.*
  yolov5s            (checked by the end-to-end tests' float64 rule, FP64_RULE below)
                     models/yolov5s.py at 640x640 on build/models/yolov5s's input
                     (run tools/make_models.py first), converted plainly: pnnx
                     traces into Detect (5-D reshape, permute, slices, expressions)
  yolov5s_moduleop   the same with moduleop=models.yolo.Detect: Detect stays one
                     operator holding the constants its forward computes. Our Detect
                     class lives in models.yolov5s, so it is renamed models.yolo.Detect
                     (Ultralytics' name, the one the engine registers) before tracing
  yolov5s_ultralytics  the same YOLOv5s with its head as Ultralytics writes it
                     (ultralytics_detect below): the graph of issue 16 (tensor_split,
                     pnnx.Attribute grids), and with moduleop (..._moduleop) pnnx_00..06
  resnet18           models/resnet18.py (ImageNet 224x224)
  zoo_<model>        every model of tools/export_onnx_zoo.py (its seeded weights
                     and input), the models tools/pnnx_zoo.py runs through our exporter
"""
import argparse
import copy
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
sys.path.insert(0, ROOT)


def project_model(name, ultralytics=False):
    """(model, input) of models/<name>.py, on the input make_models.py wrote;
    YOLOv5s's head as Ultralytics writes it if `ultralytics`."""
    import numpy as np
    import torch
    from models import MODELS
    path = os.path.join(ROOT, "build", "models", name, name + ".input.npy")
    if not os.path.exists(path):
        sys.exit("%s missing: run /usr/bin/python3 tools/make_models.py --only %s" % (path, name))
    model = MODELS[name].build()
    if ultralytics:
        model.model[24] = ultralytics_detect(model.model[24]).eval()
    return model, torch.from_numpy(np.load(path))


class TinyShuffleUpsample:
    """Built on demand (imports torch): a conv, ShuffleNet's channel shuffle
    (view, transpose, view: pnnx fuses it into nn.ChannelShuffle) and a bilinear
    F.interpolate (pnnx on libtorch 1.13 writes F.upsample): the two operator
    types the zoo's real-pnnx files needed and our own exporter never writes."""

    @staticmethod
    def build():
        import torch
        import torch.nn.functional as F
        from torch import nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 6, 3, padding=1)

            def forward(self, x):
                y = self.conv(x)
                n, c, h, w = y.shape
                y = y.view(n, 3, c // 3, h, w).transpose(1, 2).contiguous().view(n, c, h, w)
                return F.interpolate(y, scale_factor=2.0, mode="bilinear", align_corners=False)

        torch.manual_seed(0)
        return Net().eval()


def ultralytics_detect(ours):
    """Built on demand (imports torch): a Detect written as Ultralytics' YOLOv5
    (v6.1+) writes it, holding the weights of `ours` (models/yolov5s.py's
    Detect). Its forward keeps per-level grids and anchor grids built from
    the anchors buffer, which is in grid units (pixels / stride), and a stride
    tensor: with moduleop, pnnx captures these as the numbered pnnx_0x
    constants that kuiper/src/layer/yolo_detect.cpp recognises by content."""
    import torch
    from torch import nn

    class Detect(nn.Module):
        def __init__(self):
            super().__init__()
            self.nc, self.no, self.nl, self.na = ours.nc, ours.no, ours.nl, ours.na
            self.m = ours.m
            self.stride = ours.strides.clone()
            self.register_buffer("anchors", ours.anchors / self.stride.view(-1, 1, 1))
            self.grid = [torch.empty(0)] * self.nl
            self.anchor_grid = [torch.empty(0)] * self.nl

        def make_grid(self, nx, ny, i):
            shape = (1, self.na, ny, nx, 2)
            yv, xv = torch.meshgrid(torch.arange(ny, dtype=torch.float32),
                                    torch.arange(nx, dtype=torch.float32), indexing="ij")
            grid = torch.stack((xv, yv), 2).expand(shape) - 0.5
            anchor_grid = (self.anchors[i] * self.stride[i]).view(1, self.na, 1, 1, 2).expand(shape)
            return grid, anchor_grid

        def forward(self, xs):
            z = []
            for i in range(self.nl):
                x = self.m[i](xs[i])
                bs, _, ny, nx = x.shape
                x = x.view(bs, self.na, self.no, ny, nx).permute(0, 1, 3, 4, 2).contiguous()
                if self.grid[i].shape[2:4] != x.shape[2:4]:
                    self.grid[i], self.anchor_grid[i] = self.make_grid(nx, ny, i)
                xy, wh, conf = x.sigmoid().split((2, 2, self.nc + 1), 4)
                xy = (xy * 2 + self.grid[i]) * self.stride[i]
                wh = (wh * 2) ** 2 * self.anchor_grid[i]
                z.append(torch.cat((xy, wh, conf), 4).view(bs, self.na * nx * ny, self.no))
            return torch.cat(z, 1)

    return Detect()


def fixture_model(name):
    """(model, input) of a tiny model whose input is committed in models/fixtures/."""
    import numpy as np
    import torch
    fixtures = os.path.join(ROOT, "models", "fixtures")
    if name == "tiny_shuffle_upsample":  # its input is made here the first time
        model = TinyShuffleUpsample.build()
        path = os.path.join(fixtures, name + ".input.npy")
        if not os.path.exists(path):
            x = torch.randn(1, 3, 4, 5, generator=torch.Generator().manual_seed(1))
            np.save(path, x.numpy().astype("<f4"))
            with torch.no_grad():
                np.save(os.path.join(fixtures, name + ".output.npy"),
                        model(x).numpy().astype("<f4"))
        return model, torch.from_numpy(np.load(path))
    if name == "tiny_yolo_head":
        from models.tiny_yolo_head import TinyYoloHead
        torch.manual_seed(0)  # as models/tiny_yolo_head.py builds it
        model = TinyYoloHead().eval()
    elif name == "tiny_detect_ultralytics":  # tiny_detect, its head as Ultralytics writes it
        from models.tiny import build
        model = build("tiny_detect")
        model.detect = ultralytics_detect(model.detect).eval()
        name = "tiny_detect"
    else:
        from models.tiny import build
        model = build(name)
    return model, torch.from_numpy(np.load(os.path.join(fixtures, name + ".input.npy")))


def entries():
    """entry -> (builder of (model, input), pnnx options)."""
    import export_onnx_zoo
    table = {
        "tiny_detect": (lambda: fixture_model("tiny_detect"), {}),
        "tiny_detect_moduleop": (lambda: fixture_model("tiny_detect"),
                                 {"moduleop": "models.yolo.Detect"}),
        "tiny_detect_ultralytics": (lambda: fixture_model("tiny_detect_ultralytics"), {}),
        "tiny_detect_ultralytics_moduleop": (lambda: fixture_model("tiny_detect_ultralytics"),
                                             {"moduleop": "models.yolo.Detect"}),
        "tiny_yolo_head": (lambda: fixture_model("tiny_yolo_head"), {}),
        "tiny_shuffle_upsample": (lambda: fixture_model("tiny_shuffle_upsample"), {}),
        "yolov5s": (lambda: project_model("yolov5s"), {}),
        "yolov5s_moduleop": (lambda: project_model("yolov5s"),
                             {"moduleop": "models.yolo.Detect"}),
        "yolov5s_ultralytics": (lambda: project_model("yolov5s", True), {}),
        "yolov5s_ultralytics_moduleop": (lambda: project_model("yolov5s", True),
                                         {"moduleop": "models.yolo.Detect"}),
        "resnet18": (lambda: project_model("resnet18"), {}),
    }
    for name in export_onnx_zoo.MODELS:
        table["zoo_" + name] = (lambda name=name: export_onnx_zoo.seeded_model(name)[:2], {})
    return table


# Entries checked by final_project/test/test_end_to_end.cpp's YOLOv5s rule
# instead: every float32 run of the 640x640 YOLOv5s is 0.06-0.16 from float64
# (models/README.md, "How close is close"), so the engine must be within
# 1e-4 * max|ref| of the float64 output.
FP64_RULE = ("yolov5s", "yolov5s_moduleop", "yolov5s_ultralytics",
             "yolov5s_ultralytics_moduleop")


def check_fp64_rule(kuiper, folder):
    """(ok, engine's max diff from float64, allowed, text) by the end-to-end rule."""
    import tempfile
    import numpy as np
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out.npy")
        run = subprocess.run([kuiper, "run", os.path.join(folder, "model.pnnx.param"),
                              os.path.join(folder, "input.npy"), "-o", out],
                             capture_output=True, text=True)
        if run.returncode != 0:
            return False, None, None, (run.stderr or run.stdout).strip()
        got = np.load(out).astype(np.float64)
    y64 = np.load(os.path.join(folder, "output_fp64.npy"))
    y32 = np.load(os.path.join(folder, "output.npy")).astype(np.float64)
    allowed = 1e-4 * float(np.abs(y64).max())
    diff = float(np.abs(got - y64).max())
    return diff <= allowed, diff, allowed, "fp64 rule: engine %.3g, PyTorch float32 %.3g from " \
        "float64; engine %.3g from PyTorch" % (diff, float(np.abs(y32 - y64).max()),
                                               float(np.abs(got - y32).max()))


def convert(pnnx, name, folder):
    """Traces the entry, runs pnnx on it, writes the reference outputs."""
    import numpy as np
    import torch
    build, options = entries()[name]
    model, x = build()
    os.makedirs(folder, exist_ok=True)
    renamed, originals = [], {}
    if "moduleop" in options:
        # TorchScript names a module's class by __module__ + __qualname__, and
        # pnnx's moduleop matches that name.
        module, _, cls = options["moduleop"].rpartition(".")
        for m in model.modules():
            if type(m).__name__ == cls and type(m) not in renamed:
                renamed.append(type(m))
        originals = {t: t.__module__ for t in renamed}
        for t in renamed:
            t.__module__ = module
    try:
        with torch.no_grad():
            y = model(x)
            y64 = copy.deepcopy(model).double()(x.double())
            traced = torch.jit.trace(model, x)
        traced.save(os.path.join(folder, "model.pt"))
    finally:
        for t in renamed:
            t.__module__ = originals[t]
    np.save(os.path.join(folder, "input.npy"), x.numpy().astype(np.float32))
    np.save(os.path.join(folder, "output.npy"), y.numpy().astype(np.float32))
    np.save(os.path.join(folder, "output_fp64.npy"), y64.numpy())
    cmd = [pnnx, "model.pt", "inputshape=[%s]" % ",".join(map(str, x.shape))]
    cmd += ["%s=%s" % kv for kv in options.items()]
    run = subprocess.run(cmd, cwd=folder, capture_output=True, text=True)
    with open(os.path.join(folder, "pnnx.log"), "w") as f:
        f.write(" ".join(cmd) + "\n" + run.stdout + run.stderr)
    if run.returncode != 0 or not os.path.exists(os.path.join(folder, "model.pnnx.param")):
        raise RuntimeError("pnnx failed (%s/pnnx.log)" % folder)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pnnx", required=True, help="the pnnx converter (built by hand)")
    parser.add_argument("--kuiper", default=os.path.join(ROOT, "build", "solutions", "bin",
                                                         "kuiper"))
    parser.add_argument("--out", default=os.path.join(ROOT, "build", "models", "real_pnnx"))
    parser.add_argument("--only", nargs="*", help="entries (default: all)")
    parser.add_argument("--table", help="write a Markdown table of the results here")
    args = parser.parse_args()

    import torch
    import onnx_zoo_check
    torch.set_num_threads(1)  # the machine is shared
    table = entries()
    names = args.only or list(table)
    unknown = [n for n in names if n not in table]
    if unknown:
        parser.error("unknown entries: %s (known: %s)" % (", ".join(unknown), ", ".join(table)))
    rows = []
    for name in names:
        folder = os.path.join(args.out, name)
        try:
            convert(os.path.abspath(args.pnnx), name, folder)
        except RuntimeError as e:
            rows.append((name, "pnnx fails", "-", "-", str(e)))
            print("%-26s %s" % (name, e), flush=True)
            continue
        if name in FP64_RULE:
            ok, diff, allowed, text = check_fp64_rule(args.kuiper, folder)
        else:
            ok, diff, allowed, text = onnx_zoo_check.check(args.kuiper, folder,
                                                            model="model.pnnx.param")
        status = ("runs (fp64)" if text.startswith("fp64") else "runs") if ok else "FAILS"
        shown = "-" if diff is None else "%.3g" % diff
        limit = "-" if allowed is None else "%.3g" % allowed
        note = text.splitlines()[-1] if text else ""
        print("%-26s %-12s max abs diff %-9s (allowed %s) %s" % (name, status, shown, limit, note),
              flush=True)
        rows.append((name, status, shown, limit, note))
    if args.table:
        header = ("model", "status", "max abs diff (vs PyTorch; fp64 rule: vs float64)", "allowed",
                  "note")
        onnx_zoo_check.write_table(args.table, header, rows)
    failed = [r for r in rows if not r[1].startswith("runs")]
    print("%d models, %d run" % (len(rows), len(rows) - len(failed)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
