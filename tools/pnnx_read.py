"""Read PNNX files back and run them with PyTorch functional ops.

This is the checker's half of the round trip: it knows nothing about the
exporter and reads only the two files, the way the C++ engine will. `run()` is
a reference interpreter for every operator type the exporter writes, so an
exported graph can be compared against the original module's output.
"""
import re
import zipfile

import numpy as np
import torch
import torch.nn.functional as F

MAGIC = "7767517"


def parse_value(text):
    """A PNNX parameter string to a Python value (inverse of format_param)."""
    if text == "None":
        return None
    if text in ("True", "False"):
        return text == "True"
    if text.startswith("("):
        return tuple(parse_value(x) for x in text[1:-1].split(",") if x)
    if re.fullmatch(r"-?\d+", text):
        return int(text)
    if re.fullmatch(r"-?[\d.]+(e[-+]\d+)?", text):
        return float(text)
    return text


def _parse_shape(text):
    shape, dtype = text[1:].split(")")
    return tuple(int(d) for d in shape.split(",") if d), dtype


def read_param(path):
    """Return (ops, operand_count); each op is a dict with type, name, inputs,
    outputs, params, attrs {key: (shape, dtype)}, shapes {operand: shape}."""
    with open(path) as f:
        lines = f.read().splitlines()
    if lines[0] != MAGIC:
        raise ValueError("%s: bad magic %r" % (path, lines[0]))
    n_ops, n_operands = map(int, lines[1].split())
    ops = []
    for line in lines[2:]:
        tok = line.split()
        n_in, n_out = int(tok[2]), int(tok[3])
        op = dict(type=tok[0], name=tok[1], inputs=tok[4:4 + n_in],
                  outputs=tok[4 + n_in:4 + n_in + n_out], params={}, attrs={}, shapes={},
                  order=[])
        for item in tok[4 + n_in + n_out:]:
            key, value = item.split("=", 1)
            op["order"].append(key)
            if key.startswith("@"):
                op["attrs"][key[1:]] = _parse_shape(value)
            elif key.startswith("#"):
                op["shapes"][key[1:]] = _parse_shape(value)[0]
            else:
                op["params"][key] = parse_value(value)
        ops.append(op)
    if len(ops) != n_ops:
        raise ValueError("%s: header says %d operators, found %d" % (path, n_ops, len(ops)))
    return ops, n_operands


def read_bin(path):
    """All attributes as {'<op>.<attr>': bytes}, checking they are stored uncompressed."""
    with zipfile.ZipFile(path) as zf:
        for info in zf.infolist():
            if info.compress_type != zipfile.ZIP_STORED:
                raise ValueError("%s: entry %s is compressed" % (path, info.filename))
        return {info.filename: zf.read(info) for info in zf.infolist()}


def load(param_path, bin_path):
    """ops with attribute data filled in: op['data'][key] is a float32 tensor."""
    ops, _ = read_param(param_path)
    blobs = read_bin(bin_path)
    for op in ops:
        op["data"] = {}
        for key, (shape, dtype) in op["attrs"].items():
            raw = blobs["%s.%s" % (op["name"], key)]
            op["data"][key] = torch.from_numpy(np.frombuffer(raw, "<f4").reshape(shape).copy())
    return ops


# ---------------------------------------------------------------------------
# Reference interpreter

def eval_expression(expr, args):
    """Evaluate a PNNX prefix expression like add(mul(@0,@1),2)."""
    tokens = re.findall(r"[A-Za-z_]+|@\d+|-?[\d.]+(?:e[-+]\d+)?|[(),]", expr)
    pos = 0

    def parse():
        nonlocal pos
        t = tokens[pos]
        pos += 1
        if t.startswith("@"):
            return args[int(t[1:])]
        if t[0].isdigit() or t[0] == "-":
            return float(t)
        assert tokens[pos] == "(", expr
        pos += 1
        operands = [parse()]
        while tokens[pos] == ",":
            pos += 1
            operands.append(parse())
        pos += 1  # ')'
        binary = {"add": torch.add, "sub": torch.sub, "mul": torch.mul, "div": torch.div,
                  "pow": torch.pow}
        unary = {"sin": torch.sin, "cos": torch.cos, "exp": torch.exp, "abs": torch.abs,
                 "neg": torch.neg}
        if t in binary:
            a, b = operands
            return binary[t](torch.as_tensor(a), b)
        return unary[t](operands[0])

    return parse()


def detect(op, xs):
    """models.yolo.Detect, written from its docstring in models/yolov5s.py."""
    nc, na, d = op["params"]["nc"], op["params"]["na"], op["data"]
    no, out = nc + 5, []
    for i, x in enumerate(xs):
        bs, _, ny, nx = x.shape
        p = F.conv2d(x, d["m.%d.weight" % i], d["m.%d.bias" % i])
        y = p.view(bs, na, no, ny, nx).permute(0, 1, 3, 4, 2).sigmoid()
        gx = torch.arange(nx).view(1, 1, 1, nx).expand(1, 1, ny, nx)
        gy = torch.arange(ny).view(1, 1, ny, 1).expand(1, 1, ny, nx)
        s, anchor = d["strides"][i], d["anchors"][i]
        cx = (y[..., 0] * 2 - 0.5 + gx) * s
        cy = (y[..., 1] * 2 - 0.5 + gy) * s
        w = (y[..., 2] * 2) ** 2 * anchor[:, 0].view(1, na, 1, 1)
        h = (y[..., 3] * 2) ** 2 * anchor[:, 1].view(1, na, 1, 1)
        box = torch.stack((cx, cy, w, h), -1)
        out.append(torch.cat((box, y[..., 4:]), -1).reshape(bs, -1, no))
    return torch.cat(out, 1)


def run_op(op, xs):
    t, p, d = op["type"], op["params"], op["data"]
    if t == "nn.Conv2d":
        return F.conv2d(xs[0], d["weight"], d.get("bias"), p["stride"], p["padding"],
                        p["dilation"], p["groups"])
    if t == "nn.BatchNorm2d":
        return F.batch_norm(xs[0], d["running_mean"], d["running_var"], d.get("weight"),
                            d.get("bias"), False, 0.0, p["eps"])
    if t == "nn.ReLU":
        return F.relu(xs[0])
    if t == "nn.Sigmoid":
        return torch.sigmoid(xs[0])
    if t == "nn.SiLU":
        return F.silu(xs[0])
    if t == "nn.MaxPool2d":
        return F.max_pool2d(xs[0], p["kernel_size"], p["stride"], p["padding"], p["dilation"],
                            p["ceil_mode"])
    if t == "nn.AdaptiveAvgPool2d":
        return F.adaptive_avg_pool2d(xs[0], p["output_size"])
    if t == "nn.Linear":
        return F.linear(xs[0], d["weight"], d.get("bias"))
    if t == "nn.Upsample":
        return F.interpolate(xs[0], p["size"], p["scale_factor"], p["mode"],
                             None if p["mode"] == "nearest" else p["align_corners"])
    if t == "nn.Softmax":
        return torch.softmax(xs[0], p["dim"])
    if t == "nn.ReLU6":
        return F.relu6(xs[0])
    if t == "nn.Hardswish":
        return F.hardswish(xs[0])
    if t == "nn.Hardsigmoid":
        return F.hardsigmoid(xs[0])
    if t == "F.sigmoid":
        return torch.sigmoid(xs[0])
    if t == "F.max_pool2d":
        return F.max_pool2d(xs[0], p["kernel_size"], p["stride"], p["padding"], p["dilation"],
                            p["ceil_mode"])
    if t == "F.adaptive_avg_pool2d":
        return F.adaptive_avg_pool2d(xs[0], p["output_size"])
    if t == "F.interpolate":
        return F.interpolate(xs[0], p.get("size"), p.get("scale_factor"), p["mode"],
                             None if p["mode"] == "nearest" else p["align_corners"],
                             p.get("recompute_scale_factor"))
    if t == "nn.Flatten":
        return torch.flatten(xs[0], p["start_dim"], p["end_dim"])
    if t == "torch.transpose":
        return torch.transpose(xs[0], p["dim0"], p["dim1"])
    if t == "Tensor.permute":
        return xs[0].permute(p["dims"])
    if t == "Tensor.slice":
        return xs[0][(slice(None),) * p["dim"] + (slice(p["start"], p["end"], p["step"]),)]
    if t == "torch.mean":
        return torch.mean(xs[0], p["dim"], p["keepdim"])
    if t == "torch.chunk":  # several outputs: a tuple
        return torch.chunk(xs[0], p["chunks"], p["dim"])
    if t == "pnnx.Attribute":
        return d["data"]
    if t == "torch.flatten":
        return torch.flatten(xs[0], p["start_dim"], p["end_dim"])
    if t == "torch.cat":
        return torch.cat(xs, p["dim"])
    if t == "Tensor.view":
        return xs[0].reshape(p["shape"])
    if t == "pnnx.Expression":
        return eval_expression(p["expr"], xs)
    if t == "models.yolo.Detect":
        return detect(op, xs)
    raise NotImplementedError(t)


def run(ops, inputs):
    """Run a loaded graph on a list of input tensors; returns the output tensors."""
    values, outputs = {}, []
    feed = iter(inputs)
    with torch.no_grad():
        for op in ops:
            if op["type"] == "pnnx.Input":
                values[op["outputs"][0]] = next(feed)
            elif op["type"] == "pnnx.Output":
                outputs.append(values[op["inputs"][0]])
            else:
                result = run_op(op, [values[n] for n in op["inputs"]])
                if isinstance(result, tuple):
                    values.update(zip(op["outputs"], result))
                else:
                    values[op["outputs"][0]] = result
    return outputs
