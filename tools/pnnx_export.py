"""Export a torch.nn.Module to PNNX files (.pnnx.param text + .pnnx.bin zip).

The real PNNX (Tencent/ncnn tools/pnnx) works on TorchScript and ships as a C++
program we cannot install here, so this file produces the same file format from
a torch.fx trace. The writer follows PNNX's own `Graph::save` (ir.cpp):

  7767517
  <operator count> <operand count>
  <type> <name> <n_in> <n_out> <in operands> <out operands> key=value ...
      @attr=(shape)f32 ... #operand=(shape)f32 ...        (one line per operator)

* Operand names are decimal numbers in order of creation, as in PNNX.
* Parameters and attributes are written sorted by key (PNNX keeps them in a
  std::map); operand shapes follow, inputs first, then outputs.
* Type and name columns are padded to 24 characters like PNNX's
  `%-24s %-24s`; readers split on whitespace, so the padding is cosmetic.
* PNNX also writes `$input=<operand>` on some operators; it only names inputs
  for its Python emitter and carries no information here, so we leave it out.
* The .bin is an uncompressed zip with one entry `<operator>.<attribute>` of
  raw little-endian float32 data (row-major, PyTorch's own layout).

Usage:  export(module, [example_input], "net.pnnx.param", "net.pnnx.bin")
"""
import operator
import zipfile

import numpy as np
import torch
import torch.fx as fx
from torch import nn
from torch.fx.passes.shape_prop import ShapeProp

# A fixed timestamp: zip entries otherwise carry the current time, and the
# committed fixtures must regenerate byte-identically.
_ZIP_DATE = (1980, 1, 1, 0, 0, 0)

# Elementwise arithmetic becomes pnnx.Expression, named as PNNX names it.
_BINARY = {operator.add: "add", operator.sub: "sub", operator.mul: "mul",
           operator.truediv: "div", torch.add: "add", torch.sub: "sub",
           torch.mul: "mul", torch.div: "div"}
_UNARY = {torch.sin: "sin", torch.cos: "cos", torch.exp: "exp",
          torch.abs: "abs", operator.neg: "neg", torch.neg: "neg"}


class Operand:
    def __init__(self, shape):
        self.shape = tuple(shape)
        self.name = None  # numbered once the operator list is final


class Operator:
    def __init__(self, type_, name, inputs, params=None, attrs=None):
        self.type, self.name, self.inputs = type_, name, list(inputs)
        self.outputs = []
        self.params = dict(params or {})
        self.attrs = dict(attrs or {})  # key -> np.float32 array


# --------------------------------------------------------------------------
# Module -> (type, params, attrs). A custom module can export itself as one
# operator by defining `pnnx_type` and `pnnx_export() -> (params, attrs)`.

def _pair(v):
    return tuple(v) if isinstance(v, (tuple, list)) else (v, v)


def _conv2d(m):
    if isinstance(m.padding, str):
        raise ValueError("Conv2d padding='%s' is not supported; give numbers" % m.padding)
    params = dict(bias=m.bias is not None, dilation=_pair(m.dilation), groups=m.groups,
                  in_channels=m.in_channels, kernel_size=_pair(m.kernel_size),
                  out_channels=m.out_channels, padding=_pair(m.padding),
                  padding_mode=m.padding_mode, stride=_pair(m.stride))
    attrs = {"weight": m.weight}
    if m.bias is not None:
        attrs["bias"] = m.bias
    return "nn.Conv2d", params, attrs


def _batchnorm2d(m):
    attrs = {"running_mean": m.running_mean, "running_var": m.running_var}
    if m.affine:
        attrs.update(weight=m.weight, bias=m.bias)
    return "nn.BatchNorm2d", dict(affine=m.affine, eps=m.eps, num_features=m.num_features), attrs


def _maxpool2d(m):
    return "nn.MaxPool2d", dict(
        ceil_mode=m.ceil_mode, dilation=_pair(m.dilation), kernel_size=_pair(m.kernel_size),
        padding=_pair(m.padding), return_indices=m.return_indices,
        stride=_pair(m.stride if m.stride is not None else m.kernel_size)), {}


def _adaptive_avgpool2d(m):
    return "nn.AdaptiveAvgPool2d", dict(output_size=_pair(m.output_size)), {}


def _linear(m):
    attrs = {"weight": m.weight}
    if m.bias is not None:
        attrs["bias"] = m.bias
    return "nn.Linear", dict(bias=m.bias is not None, in_features=m.in_features,
                             out_features=m.out_features), attrs


def _upsample(m):
    sf = m.scale_factor
    return "nn.Upsample", dict(
        align_corners=bool(m.align_corners),  # None (nearest) is written False, as PNNX does
        mode=m.mode, size=None if m.size is None else _pair(m.size),
        scale_factor=None if sf is None else tuple(float(s) for s in _pair(sf))), {}


def _softmax(m):
    if m.dim is None:
        raise ValueError("nn.Softmax needs an explicit dim")
    return "nn.Softmax", dict(dim=m.dim), {}


_MODULES = {
    nn.Conv2d: _conv2d, nn.BatchNorm2d: _batchnorm2d, nn.MaxPool2d: _maxpool2d,
    nn.AdaptiveAvgPool2d: _adaptive_avgpool2d, nn.Linear: _linear,
    nn.Upsample: _upsample, nn.Softmax: _softmax,
    nn.ReLU: lambda m: ("nn.ReLU", {}, {}),
    nn.Sigmoid: lambda m: ("nn.Sigmoid", {}, {}),
    nn.SiLU: lambda m: ("nn.SiLU", {}, {}),
}


def _convert_module(m):
    if hasattr(m, "pnnx_type"):
        params, attrs = m.pnnx_export()
        return m.pnnx_type, params, attrs
    if type(m) not in _MODULES:
        raise NotImplementedError("no PNNX mapping for module %s" % type(m).__name__)
    return _MODULES[type(m)](m)


def fold_batchnorm(conv_weight, conv_bias, bn):
    """Conv followed by eval-mode BN is one conv: w' = w*s, b' = (b-mean)*s + beta,
    with s = gamma / sqrt(var + eps) per output channel. Done in float64 so the
    folded float32 weights lose nothing beyond the final rounding."""
    w = conv_weight.detach().double()
    b = conv_bias.detach().double() if conv_bias is not None else torch.zeros(w.shape[0], dtype=torch.float64)
    gamma = bn.weight.detach().double() if bn.affine else torch.ones_like(b)
    beta = bn.bias.detach().double() if bn.affine else torch.zeros_like(b)
    s = gamma / torch.sqrt(bn.running_var.double() + bn.eps)
    return (w * s.view(-1, 1, 1, 1)).float(), ((b - bn.running_mean.double()) * s + beta).float()


# --------------------------------------------------------------------------
# Tracing and conversion

class Tracer(fx.Tracer):
    """torch.nn modules are leaves by default; modules that export themselves as
    one PNNX operator (the YOLO Detect head) must stay leaves too."""

    def is_leaf_module(self, m, qualname):
        return hasattr(m, "pnnx_type") or super().is_leaf_module(m, qualname)


def trace(module, example_inputs):
    """fx-trace `module` and record every node's output shape (node.meta['tensor_meta'])."""
    gm = fx.GraphModule(module, Tracer().trace(module))
    ShapeProp(gm).propagate(*example_inputs)
    return gm


def _shape(node):
    meta = node.meta.get("tensor_meta")
    if meta is None or not hasattr(meta, "shape"):
        raise NotImplementedError("node %s does not produce a single tensor" % node.name)
    return tuple(meta.shape)


def _flat_nodes(args):
    """Tensor inputs of a call in order, looking inside lists (torch.cat, Detect)."""
    out = []
    for a in args:
        if isinstance(a, fx.Node):
            out.append(a)
        elif isinstance(a, (list, tuple)):
            out.extend(_flat_nodes(a))
    return out


def _literal(v):
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise NotImplementedError("expression constant %r" % (v,))
    return str(v) if isinstance(v, int) else "%e" % v


def _is_expr(node):
    return node.op == "call_function" and (node.target in _BINARY or node.target in _UNARY)


def _inlined(node):
    """An arithmetic node whose only user is another arithmetic node is merged
    into that user's expression, as PNNX does (add(mul(@0,@1),@2))."""
    return _is_expr(node) and len(node.users) == 1 and _is_expr(next(iter(node.users)))


def _expression(node, inputs):
    """Build PNNX's prefix expression text; `inputs` collects the tensor operands
    in order of first use, each referenced as @index."""
    def term(a):
        if not isinstance(a, fx.Node):
            return _literal(a)
        if _inlined(a):
            return _expression(a, inputs)
        if a not in inputs:
            inputs.append(a)
        return "@%d" % inputs.index(a)

    if node.target in _UNARY:
        return "%s(%s)" % (_UNARY[node.target], term(node.args[0]))
    if node.kwargs:
        raise NotImplementedError("keyword arguments on %s" % node.target)
    return "%s(%s,%s)" % (_BINARY[node.target], term(node.args[0]), term(node.args[1]))


def _function_op(node):
    """call_function / call_method nodes other than arithmetic: (type, params)."""
    def arg(i, key, default):
        return node.args[i] if len(node.args) > i else node.kwargs.get(key, default)

    name = node.target  # a function object, or a method name string
    if name in (torch.flatten, "flatten"):
        return "torch.flatten", dict(start_dim=arg(1, "start_dim", 0), end_dim=arg(2, "end_dim", -1))
    if name is torch.cat:
        return "torch.cat", dict(dim=arg(1, "dim", 0))
    if name == "view":
        shape = node.args[1:]
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = shape[0]
        if not all(isinstance(s, int) for s in shape):
            raise NotImplementedError("Tensor.view with a computed shape (%s)" % node.name)
        return "Tensor.view", dict(shape=tuple(shape))
    raise NotImplementedError("no PNNX mapping for %s %s" % (node.op, node.target))


def convert(gm, fold_bn=True):
    """Turn a traced, shape-propagated GraphModule into a list of Operators."""
    ops, value = [], {}          # value: fx node -> Operand it produced
    seen_modules, counters = set(), {}

    def unique_name(prefix):
        n = counters.get(prefix, 0)
        counters[prefix] = n + 1
        return "%s_%d" % (prefix, n)

    def emit(type_, name, in_nodes, node, params=None, attrs=None):
        op = Operator(type_, name, [value[n] for n in in_nodes], params, attrs)
        out = Operand(_shape(node))
        op.outputs.append(out)
        value[node] = out
        ops.append(op)
        return op

    conv_ops = {}  # conv node -> its Operator, so a following BN can fold into it
    for node in gm.graph.nodes:
        if node.op == "placeholder":
            emit("pnnx.Input", unique_name("pnnx_input"), [], node)
        elif node.op == "output":
            for src in _flat_nodes(node.args):
                op = Operator("pnnx.Output", unique_name("pnnx_output"), [value[src]])
                ops.append(op)
        elif node.op == "call_module":
            m = gm.get_submodule(node.target)
            src = node.args[0] if node.args else None
            if (fold_bn and isinstance(m, nn.BatchNorm2d) and src in conv_ops
                    and len(src.users) == 1):
                conv = conv_ops[src]
                conv.attrs["weight"], conv.attrs["bias"] = fold_batchnorm(
                    conv.attrs["weight"], conv.attrs.get("bias"), m)
                conv.params["bias"] = True
                value[node] = value[src]  # BN keeps the shape; reuse the conv output
                continue
            type_, params, attrs = _convert_module(m)
            # A module called twice (ResNet's relu, SPPF's pool) needs a second
            # name: PNNX calls the repeats pnnx_unique_N.
            name = node.target if node.target not in seen_modules else unique_name("pnnx_unique")
            seen_modules.add(node.target)
            op = emit(type_, name, _flat_nodes(node.args), node, params, attrs)
            if isinstance(m, nn.Conv2d):
                conv_ops[node] = op
        elif _is_expr(node):
            if _inlined(node):
                continue
            inputs = []
            expr = _expression(node, inputs)
            emit("pnnx.Expression", unique_name("pnnx_expr"), inputs, node, dict(expr=expr))
        elif node.op in ("call_function", "call_method"):
            type_, params = _function_op(node)
            emit(type_, unique_name(type_), _flat_nodes(node.args[:1]), node, params)
        else:
            raise NotImplementedError("fx node %s (%s) is not supported" % (node.name, node.op))

    number_operands(ops)
    return ops


def number_operands(ops):
    """Names every operand by its position, as PNNX numbers them: in the order operators create them."""
    count = 0
    for op in ops:
        for out in op.outputs:
            out.name = str(count)
            count += 1


# --------------------------------------------------------------------------
# Writing

def format_param(v):
    """A parameter value spelled as PNNX's Parameter::encode_to_string does."""
    if v is None:
        return "None"
    if isinstance(v, bool):
        return "True" if v else "False"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return "%e" % np.float32(v)  # PNNX stores float32, prints with %e
    if isinstance(v, str):
        return v
    if isinstance(v, (tuple, list)):
        if any(isinstance(x, float) for x in v):
            return "(" + ",".join("%e" % np.float32(x) for x in v) + ")"
        return "(" + ",".join(str(int(x)) for x in v) + ")"
    raise TypeError("cannot write parameter %r" % (v,))


def _to_array(t):
    a = t.detach().cpu().numpy() if isinstance(t, torch.Tensor) else np.asarray(t)
    return np.ascontiguousarray(a, dtype="<f4")


def _shape_text(shape):
    return "(" + ",".join(str(d) for d in shape) + ")f32"


def write_param(ops, path):
    operands = sum(len(op.outputs) for op in ops)
    lines = ["7767517", "%d %d" % (len(ops), operands)]
    for op in ops:
        parts = ["%-24s %-24s %d %d" % (op.type, op.name, len(op.inputs), len(op.outputs))]
        parts += [x.name for x in op.inputs + op.outputs]
        parts += ["%s=%s" % (k, format_param(op.params[k])) for k in sorted(op.params)]
        parts += ["@%s=%s" % (k, _shape_text(_to_array(op.attrs[k]).shape)) for k in sorted(op.attrs)]
        parts += ["#%s=%s" % (x.name, _shape_text(x.shape)) for x in op.inputs + op.outputs]
        lines.append(" ".join(parts))
    with open(path, "w", newline="\n") as f:
        f.write("\n".join(lines) + "\n")


def write_bin(ops, path):
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as zf:
        for op in ops:
            for k in sorted(op.attrs):  # same order as the .param line
                info = zipfile.ZipInfo("%s.%s" % (op.name, k), date_time=_ZIP_DATE)
                info.compress_type = zipfile.ZIP_STORED
                info.create_system = 3            # fixed, whatever OS writes it
                info.external_attr = 0o644 << 16
                zf.writestr(info, _to_array(op.attrs[k]).tobytes())


def export(module, example_inputs, param_path, bin_path=None, fold_bn=True):
    """Trace `module` (in eval mode) on `example_inputs` and write the PNNX files.
    Returns the operator list. With bin_path=None only the .param is written."""
    module = module.eval()
    with torch.no_grad():
        ops = convert(trace(module, example_inputs), fold_bn=fold_bn)
    write_param(ops, param_path)
    if bin_path is not None:
        write_bin(ops, bin_path)
    return ops
