#!/usr/bin/python3
"""Round-trip check of the PNNX exporter:  /usr/bin/python3 tools/test_export.py

For every model in models/: export it, read the .param/.bin back with
tools/pnnx_read.py, and compare with the PyTorch module it came from:
  * file structure: magic, counts, operand numbering, shape annotations on
    producer and consumers, sorted keys, one uncompressed zip entry per attribute;
  * each operator's type, parameters and attribute shapes against the module;
  * every folded conv reproduces conv + BatchNorm, and BN appears only unfolded;
  * running the files (reference interpreter) reproduces the module's output;
  * regeneration is byte-identical and matches the committed models/fixtures/.
Exits 1 if anything fails (all failures are listed).
"""
import filecmp
import os
import sys
import tempfile
import time
import zipfile

import numpy as np
import torch
import torch.nn.functional as F
import torchvision
from torch import nn

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import make_models  # noqa: E402
import pnnx_read  # noqa: E402
from models import MODELS, resnet18, tiny, yolov5s  # noqa: E402
from models.seeding import seeded_input  # noqa: E402
from pnnx_export import Tracer, export, format_param  # noqa: E402

FAILURES = []
# Module types and the PNNX type they must export as (custom modules carry pnnx_type).
TYPE_OF = {nn.Conv2d: "nn.Conv2d", nn.BatchNorm2d: "nn.BatchNorm2d", nn.ReLU: "nn.ReLU",
           nn.Sigmoid: "nn.Sigmoid", nn.SiLU: "nn.SiLU", nn.MaxPool2d: "nn.MaxPool2d",
           nn.AdaptiveAvgPool2d: "nn.AdaptiveAvgPool2d", nn.Linear: "nn.Linear",
           nn.Upsample: "nn.Upsample", nn.Softmax: "nn.Softmax"}


def check(ok, what):
    if not ok:
        FAILURES.append(what)
        print("  FAIL:", what)
    return ok


def normalise(value, like):
    """A module attribute in the form the .param should hold (PNNX widens ints to
    pairs for 2-D layers and writes None align_corners as False)."""
    if isinstance(value, torch.Tensor) or value is None and like is not None:
        return like if value is None and isinstance(like, bool) else value
    if isinstance(like, tuple) and not isinstance(value, (tuple, list)):
        value = (value,) * len(like)
    if isinstance(value, (tuple, list)):
        return tuple(float(v) if isinstance(l, float) else v for v, l in zip(value, like))
    return float(value) if isinstance(like, float) else value


def f32(value):
    """Floats compared as the float32 PNNX stores (1e-5 in the file vs 1e-5 in Python)."""
    if isinstance(value, tuple):
        return tuple(f32(v) for v in value)
    return np.float32(value) if isinstance(value, float) else value


# ---------------------------------------------------------------------------

def check_structure(name, ops, n_operands, blobs):
    check(sum(len(op["outputs"]) for op in ops) == n_operands, "%s: operand count" % name)
    produced = []
    shapes = {}
    for op in ops:
        where = "%s/%s" % (name, op["name"])
        for x in op["inputs"]:
            check(x in produced, "%s: input %s used before it is produced" % (where, x))
        for x in op["outputs"]:
            check(x == str(len(produced)), "%s: operand %s is not numbered in creation order" % (where, x))
            produced.append(x)
        for x in op["inputs"] + op["outputs"]:
            check(x in op["shapes"], "%s: operand %s has no #shape" % (where, x))
            if x in op["shapes"]:
                check(shapes.setdefault(x, op["shapes"][x]) == op["shapes"][x],
                      "%s: operand %s shape differs between producer and consumer" % (where, x))
        keys = op["order"]
        plain = [k for k in keys if k[0] not in "@#"]
        attrs = [k for k in keys if k[0] == "@"]
        check(keys[:len(plain) + len(attrs)] == plain + attrs and plain == sorted(plain)
              and attrs == sorted(attrs), "%s: keys not params, @attrs, #shapes in sorted order" % where)
        for key, (shape, dtype) in op["attrs"].items():
            blob = blobs.pop("%s.%s" % (op["name"], key), None)
            size = 4 * int(torch.tensor(shape).prod())
            check(dtype == "f32" and blob is not None and len(blob) == size,
                  "%s: @%s missing from .bin or wrong size" % (where, key))
    check(not blobs, "%s: .bin has entries no operator names: %s" % (name, sorted(blobs)[:3]))


def check_against_module(name, model, x, ops, folded):
    graph = Tracer().trace(model)
    calls = [n for n in graph.nodes if n.op == "call_module"]
    module_of = {n: model.get_submodule(n.target) for n in calls}
    by_name = {op["name"]: op for op in ops}

    def is_conv(n):
        return isinstance(n, torch.fx.Node) and isinstance(module_of.get(n), nn.Conv2d)
    bn_calls = [n for n in calls if isinstance(module_of[n], nn.BatchNorm2d) and is_conv(n.args[0])]
    bn_after_conv = {n.args[0].target: module_of[n] for n in bn_calls}  # conv name -> its BN

    modules = dict(model.named_modules())
    for op in ops:
        if op["name"] not in modules:
            continue  # inputs, functional ops, repeated calls (pnnx_unique_N): no module name
        where = "%s/%s" % (name, op["name"])
        m = model.get_submodule(op["name"])
        check(op["type"] == getattr(m, "pnnx_type", TYPE_OF.get(type(m))), "%s: type %s" % (where, op["type"]))
        fold_bn = folded and op["name"] in bn_after_conv
        for key, value in op["params"].items():
            if key == "bias":
                expected = fold_bn or m.bias is not None
            elif hasattr(m, key):
                expected = normalise(getattr(m, key), value)
            else:
                check(False, "%s: parameter %s is not a module attribute" % (where, key))
                continue
            check(f32(value) == f32(expected), "%s: %s=%r, module has %r" % (where, key, value, expected))
        # Buffers that are not persistent (Detect's strides) are exported too.
        state = dict(m.named_parameters()) | dict(m.named_buffers())
        for key, (shape, _) in op["attrs"].items():
            expected = (m.out_channels,) if fold_bn and key == "bias" else tuple(state[key].shape)
            check(shape == expected, "%s: @%s shape %s, module has %s" % (where, key, shape, expected))
        if fold_bn:
            bn = bn_after_conv[op["name"]]
            t = torch.randn(op["shapes"][op["inputs"][0]])
            p, d = op["params"], op["data"]
            with torch.no_grad():
                want = bn(m(t))
                got = F.conv2d(t, d["weight"], d["bias"], p["stride"], p["padding"], p["dilation"], p["groups"])
            check(torch.allclose(got, want, rtol=1e-4, atol=1e-5 * float(want.abs().max())),
                  "%s: folded weights do not reproduce conv+bn (max diff %.3g)" % (where, (got - want).abs().max()))

    # Every module call is an operator (a folded BN is inside its conv's).
    for t in sorted({getattr(m, "pnnx_type", TYPE_OF.get(type(m))) for m in module_of.values()}):
        calls_t = sum(getattr(m, "pnnx_type", TYPE_OF.get(type(m))) == t for m in module_of.values())
        if t == "nn.BatchNorm2d" and folded:
            calls_t -= len(bn_after_conv)
        ops_t = sum(op["type"] == t for op in ops)
        check(ops_t == calls_t, "%s: %d %s operators for %d module calls" % (name, ops_t, t, calls_t))
    if folded:
        check(not {op["name"] for op in ops} & {n.target for n in bn_calls}, "%s: a BN was not folded" % name)

    with torch.no_grad():
        want = model(x)
    got = pnnx_read.run(ops, [x])[0]
    check(got.shape == want.shape and torch.allclose(got, want, rtol=1e-3, atol=1e-4 * float(want.abs().max())),
          "%s: running the exported graph differs from PyTorch (max diff %.3g)" % (name, (got - want).abs().max()))


def check_model(spec, tmp):
    model = spec.build()
    x = seeded_input(spec.input_shape, 0, spec.input_kind)
    for folded in (True, False):
        param = os.path.join(tmp, "%s_%d.pnnx.param" % (spec.name, folded))
        binary = param.replace(".param", ".bin")
        export(model, [x], param, binary, fold_bn=folded)
        ops, n_operands = pnnx_read.read_param(param)
        check_structure(spec.name, ops, n_operands, pnnx_read.read_bin(binary))
        check_against_module(spec.name, model, x, pnnx_read.load(param, binary), folded)


# ---------------------------------------------------------------------------
# The torchvision zoo's operators (tools/pnnx_zoo.py), each in a small module:
# exported, read back, run by the reference interpreter against PyTorch.

class ShuffleBlock(nn.Module):
    """shufflenet_v2's chunk, channel shuffle (size() unpacked, 5-D view,
    transpose, contiguous) and its global mean."""

    def __init__(self):
        super().__init__()
        self.conv, self.relu = nn.Conv2d(4, 8, 3, padding=1), nn.ReLU()

    def forward(self, x):
        a, b = self.conv(x).chunk(2, dim=1)
        x = torch.cat((a, self.relu(b)), 1)
        n, c, h, w = x.size()
        x = torch.transpose(x.view(n, 2, c // 2, h, w), 1, 2).contiguous().view(n, -1, h, w)
        return x.mean([2, 3])


class MobileBlock(nn.Module):
    """mobilenet_v2/v3's ReLU6, Hardswish, squeeze-excitation with Hardsigmoid,
    dropout and nn.Flatten."""

    def __init__(self):
        super().__init__()
        self.conv, self.bn = nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8)
        self.act, self.relu6 = nn.Hardswish(), nn.ReLU6()
        self.pool, self.fc = nn.AdaptiveAvgPool2d(1), nn.Conv2d(8, 8, 1)
        self.gate = nn.Hardsigmoid()
        self.head = nn.Sequential(nn.Flatten(), nn.Dropout(0.2), nn.Linear(8, 4))

    def forward(self, x):
        x = self.relu6(self.act(self.bn(self.conv(x))))
        return self.head(self.pool(self.gate(self.fc(self.pool(x))) * x))


class UpBlock(nn.Module):
    """The small UNet's functional pooling and bilinear upsampling, and
    efficientnet's StochasticDepth (the identity in eval mode)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.drop = torchvision.ops.StochasticDepth(0.2, "row")

    def forward(self, x):
        x = self.conv(x)
        d = F.max_pool2d(x, 2)
        up = F.interpolate(d, scale_factor=2.0, mode="bilinear", align_corners=True)
        half = F.interpolate(d, scale_factor=2.0, mode="bilinear", align_corners=False)
        return F.adaptive_avg_pool2d(torch.cat([self.drop(up) + x, half], 1), (2, 3))


def check_zoo_operators(tmp):
    cases = [
        ("shuffle", ShuffleBlock(), (1, 4, 6, 6), {}, {"torch.chunk", "Tensor.view",
                                                       "torch.transpose", "torch.mean"}),
        ("mobile", MobileBlock(), (1, 3, 8, 8), {}, {"nn.ReLU6", "nn.Hardswish",
                                                     "nn.Hardsigmoid", "nn.Flatten"}),
        ("up", UpBlock(), (1, 3, 8, 8), {}, {"F.max_pool2d", "F.interpolate",
                                             "F.adaptive_avg_pool2d"}),
        ("detect_traced", tiny.build("tiny_detect"), (1, 3, 64, 64), {"moduleop": False},
         {"Tensor.permute", "F.sigmoid", "Tensor.slice", "pnnx.Attribute"}),
    ]
    for name, model, shape, options, types in cases:
        torch.manual_seed(0)
        model = model.eval()
        for bn in (m for m in model.modules() if isinstance(m, nn.BatchNorm2d)):
            bn.running_mean.uniform_(-0.5, 0.5)
            bn.running_var.uniform_(0.5, 2.0)
        x = torch.randn(shape)
        param = os.path.join(tmp, name + ".pnnx.param")
        binary = param.replace(".param", ".bin")
        export(model, [x], param, binary, **options)
        ops, n_operands = pnnx_read.read_param(param)
        check_structure(name, ops, n_operands, pnnx_read.read_bin(binary))
        written = {op["type"] for op in ops}
        check(types <= written, "%s: no %s operator" % (name, sorted(types - written)))
        left_out = written & {"nn.Dropout", "nn.BatchNorm2d", "Tensor.contiguous",
                              "models.yolo.Detect"}
        check(not left_out, "%s: %s written, pnnx leaves it out" % (name, sorted(left_out)))
        if name == "shuffle":
            chunk = next(op for op in ops if op["type"] == "torch.chunk")
            check(len(chunk["outputs"]) == 2, "shuffle: torch.chunk has %d outputs, not 2" %
                  len(chunk["outputs"]))
            views = [op["params"]["shape"] for op in ops if op["type"] == "Tensor.view"]
            check(views == [(1, 2, 4, 6, 6), (1, -1, 6, 6)],
                  "shuffle: Tensor.view shapes %s, want the size() numbers" % views)
        with torch.no_grad():
            want = model(x)
        got = pnnx_read.run(pnnx_read.load(param, binary), [x])[0]
        check(got.shape == want.shape and torch.allclose(got, want, rtol=1e-4, atol=1e-5 * float(
            want.abs().max())), "%s: running the exported graph differs from PyTorch" % name)

    # What the engine cannot run is refused by name, not written wrong.
    refusals = [
        (nn.Hardtanh(-1.0, 1.0), "Hardtanh(-1, 1)"),
        (lambda x: x[:, 0], "only a slice of one dimension"),
        (lambda x: torch.mean(x), "every dimension"),
    ]
    for body, text in refusals:
        class Wrapper(nn.Module):
            def __init__(self):
                super().__init__()
                self.body = body if isinstance(body, nn.Module) else None

            def forward(self, x):
                return self.body(x) if self.body is not None else body(x)

        try:
            export(Wrapper(), [torch.randn(1, 2, 3, 3)], os.path.join(tmp, "refused.pnnx.param"))
            check(False, "exported what should be refused (%s)" % text)
        except NotImplementedError as e:
            check(text in str(e), "refusal %r does not say %r" % (str(e), text))


def check_format():
    cases = [(True, "True"), (False, "False"), (3, "3"), (1e-5, "1.000000e-05"), ("zeros", "zeros"),
             ((1, 2), "(1,2)"), ((1.0, 2.0), "(1.000000e+00,2.000000e+00)"), (None, "None"), (-1, "-1")]
    for value, text in cases:
        check(format_param(value) == text, "format_param(%r) = %r, want %r" % (value, format_param(value), text))
        check(pnnx_read.parse_value(text) == value or isinstance(value, float),
              "parse_value(%r) does not give back %r" % (text, value))


def close_arrays(old, new):
    """Same shape, and within 1e-6 of the larger of 1 and the largest magnitude."""
    scale = max(1.0, float(np.abs(old).max())) if old.size else 1.0
    return old.shape == new.shape and (old.size == 0 or float(np.abs(old - new).max()) <= 1e-6 * scale)


def close_bins(old_path, new_path):
    """Two .pnnx.bin archives with the same entries, their float32 data close_arrays."""
    with zipfile.ZipFile(old_path) as old, zipfile.ZipFile(new_path) as new:
        if old.namelist() != new.namelist():
            return False
        return all(close_arrays(np.frombuffer(old.read(name), np.float32),
                                np.frombuffer(new.read(name), np.float32))
                   for name in old.namelist())


def check_reproducible(tmp):
    a, b = os.path.join(tmp, "a"), os.path.join(tmp, "b")
    for d in (a, b):
        make_models.make_model(MODELS["tiny_net"], d, force=True)
    for f in sorted(os.listdir(os.path.join(a, "tiny_net"))):
        check(filecmp.cmp(os.path.join(a, "tiny_net", f), os.path.join(b, "tiny_net", f), shallow=False),
              "regenerated %s is not byte-identical" % f)

    fresh = os.path.join(tmp, "fixtures")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    for spec in MODELS.values():
        make_models.make_model(spec, fresh, force=True, param_only=not spec.small, flat=True)
    torch.set_num_threads(threads)
    for f in sorted(os.listdir(fresh)):
        committed = os.path.join(make_models.FIXTURES, f)
        if not os.path.exists(committed):
            check(False, "models/fixtures/%s is missing: run tools/make_models.py --fixtures" % f)
        elif f.endswith(".output.npy"):
            # Inputs and parameters come from seeded generators and must match byte for byte;
            # outputs are computed, and another CPU's kernels may round the last bit differently.
            check(close_arrays(np.load(committed), np.load(os.path.join(fresh, f))),
                  "models/fixtures/%s is stale: run tools/make_models.py --fixtures" % f)
        elif f.endswith(".pnnx.bin"):
            # Folded BatchNorm weights are computed too: the statistics are measured
            # by a forward pass (models/seeding.py), so they get the outputs' rule.
            check(close_bins(committed, os.path.join(fresh, f)),
                  "models/fixtures/%s is stale: run tools/make_models.py --fixtures" % f)
        else:
            check(filecmp.cmp(committed, os.path.join(fresh, f), shallow=False),
                  "models/fixtures/%s is stale: run tools/make_models.py --fixtures" % f)


def ultralytics_state_dict(y):
    """The keys and values an Ultralytics v6 yolov5s state_dict would hold for model y: every
    parameter, each BatchNorm's running statistics and num_batches_tracked, and Detect's
    anchors in grid units. Built from the parameters and the BNs, not from y.state_dict(), so a
    buffer Ultralytics does not have (Detect's strides are a plain attribute there) is absent."""
    sd = dict(y.named_parameters())
    for name, m in y.named_modules():
        if isinstance(m, nn.BatchNorm2d):
            for buffer in ("running_mean", "running_var", "num_batches_tracked"):
                sd["%s.%s" % (name, buffer)] = getattr(m, buffer)
    pixels = torch.tensor(yolov5s.ANCHORS, dtype=torch.float32).view(3, 3, 2)
    sd["model.24.anchors"] = pixels / torch.tensor(yolov5s.STRIDES, dtype=torch.float32).view(3, 1, 1)
    return sd


def check_checkpoints(tmp):
    """--checkpoint: a saved state_dict (torchvision's layout, Ultralytics' for YOLO) gives back
    the same model."""
    r = resnet18.build(seed=3)
    path = os.path.join(tmp, "r18.pth")
    torch.save(r.state_dict(), path)
    loaded = resnet18.build(checkpoint=path)
    check(all(torch.equal(v, loaded.state_dict()[k]) for k, v in r.state_dict().items()),
          "resnet18 checkpoint does not round-trip")

    y = yolov5s.build(seed=3)
    v6 = ultralytics_state_dict(y)
    v5 = {**v6, "model.24.anchor_grid": torch.zeros(3, 1, 3, 1, 1, 2)}  # v5.0 files carry this too
    for release, sd in (("v6", v6), ("v5.0", v5)):
        path = os.path.join(tmp, "y5_%s.pth" % release)
        torch.save(sd, path)
        try:
            loaded = yolov5s.build(checkpoint=path)
        except RuntimeError as e:  # load_state_dict is strict: a key too many or too few
            check(False, "yolov5s refuses an Ultralytics %s state_dict: %s"
                  % (release, " ".join(str(e).split())))
            continue
        check(all(torch.allclose(v, loaded.state_dict()[k]) for k, v in y.state_dict().items()),
              "yolov5s checkpoint (Ultralytics %s keys) does not round-trip" % release)


def main():
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    t0 = time.time()
    with tempfile.TemporaryDirectory() as tmp:
        print("parameter spelling")
        check_format()
        for spec in MODELS.values():
            t = time.time()
            check_model(spec, tmp)
            print("%-16s %5.1fs" % (spec.name, time.time() - t))
        print("the zoo's operators")
        check_zoo_operators(tmp)
        print("reproducible files and fixtures")
        check_reproducible(tmp)
        print("checkpoints")
        check_checkpoints(tmp)
    print("%s: %d failure(s) in %.1fs" % ("FAILED" if FAILURES else "OK", len(FAILURES), time.time() - t0))
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
