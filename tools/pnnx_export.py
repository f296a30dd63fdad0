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

What is written as what follows real pnnx's vocabulary, so one engine reads
both converters' files: torch.nn modules as `nn.<Name>` (BatchNorm folded into
the convolution before it, ReLU6, Hardswish, Hardsigmoid ...), functions and
methods as pnnx names them (`torch.cat`, `torch.chunk` with one output per
chunk, `torch.transpose`, `torch.mean`, `Tensor.view`, `Tensor.permute`,
`Tensor.slice`, `F.interpolate`, `F.max_pool2d`, `F.sigmoid` ...), arithmetic
merged into `pnnx.Expression`, constants folded into `pnnx.Attribute`, and
what is the identity in eval mode (dropout, StochasticDepth, contiguous) left
out. The trace is concrete (see Tracer): shapes are the example input's.
Anything else raises NotImplementedError naming it (tools/pnnx_zoo.py lists
the torchvision models this covers).

Usage:  export(module, [example_input], "net.pnnx.param", "net.pnnx.bin")
"""
import operator
import zipfile

import numpy as np
import torch
import torch.fx as fx
import torch.nn.functional as F
from torch import nn
from torch.fx.passes.shape_prop import ShapeProp

# A fixed timestamp: zip entries otherwise carry the current time, and the
# committed fixtures must regenerate byte-identically.
_ZIP_DATE = (1980, 1, 1, 0, 0, 0)

# Elementwise arithmetic becomes pnnx.Expression, named as PNNX names it.
_BINARY = {operator.add: "add", operator.sub: "sub", operator.mul: "mul",
           operator.truediv: "div", torch.add: "add", torch.sub: "sub",
           torch.mul: "mul", torch.div: "div", operator.pow: "pow", torch.pow: "pow"}
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


def _flatten(m):
    return "nn.Flatten", dict(end_dim=m.end_dim, start_dim=m.start_dim), {}


def _hardtanh(m):
    """nn.ReLU6 is an nn.Hardtanh(0, 6); pnnx writes it as nn.ReLU6 and a
    general Hardtanh, which the engine does not have, is refused here."""
    if isinstance(m, nn.ReLU6) or (m.min_val == 0.0 and m.max_val == 6.0):
        return "nn.ReLU6", {}, {}
    raise NotImplementedError("nn.Hardtanh(%g, %g): the engine has only ReLU6 (0, 6)" %
                              (m.min_val, m.max_val))


_MODULES = {
    nn.Conv2d: _conv2d, nn.BatchNorm2d: _batchnorm2d, nn.MaxPool2d: _maxpool2d,
    nn.AdaptiveAvgPool2d: _adaptive_avgpool2d, nn.Linear: _linear,
    nn.Upsample: _upsample, nn.Softmax: _softmax, nn.Flatten: _flatten,
    nn.ReLU6: _hardtanh, nn.Hardtanh: _hardtanh,
    nn.ReLU: lambda m: ("nn.ReLU", {}, {}),
    nn.Sigmoid: lambda m: ("nn.Sigmoid", {}, {}),
    nn.SiLU: lambda m: ("nn.SiLU", {}, {}),
    nn.Hardswish: lambda m: ("nn.Hardswish", {}, {}),
    nn.Hardsigmoid: lambda m: ("nn.Hardsigmoid", {}, {}),
    nn.Mish: lambda m: ("nn.Mish", {}, {}),
}

# Modules that are the identity in eval mode: pnnx deletes them
# (eliminate_dropout, eliminate_noop), and so do we.
_IDENTITY_MODULES = (nn.Dropout, nn.Dropout2d, nn.Identity)


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

class _ConcreteProxy(fx.Proxy):
    """A proxy that also knows the value it stands for (see Tracer): its shape
    is a plain tuple of ints, and a tuple-valued proxy (torch.chunk's result)
    unpacks into one getitem proxy per element."""

    def _value(self):
        return self.tracer.values.get(self.node) if self.tracer.concrete else None

    def __getattr__(self, k):
        if k in ("shape", "ndim") and isinstance(self._value(), torch.Tensor):
            return getattr(self._value(), k)
        return super().__getattr__(k)

    def __iter__(self):
        v = self._value()
        if isinstance(v, (tuple, list)):
            return iter([self[i] for i in range(len(v))])
        return super().__iter__()

    def __len__(self):
        v = self._value()
        if isinstance(v, (tuple, list, torch.Tensor)):
            return len(v)
        return super().__len__()


class Tracer(fx.Tracer):
    """torch.nn modules are leaves by default; modules that export themselves as
    one PNNX operator (the YOLO Detect head) must stay leaves too.

    Given example inputs, the tracer also runs every node on real values as it
    records it (a concrete trace, as the real pnnx traces TorchScript with an
    example input): `x.size()`, `x.shape` and `x.dim()` then give plain ints,
    so code such as torchvision's channel shuffle,
        b, c, h, w = x.size(); x.view(b, 2, c // 2, h, w)
    records a Tensor.view with fixed numbers, the way pnnx writes it, and
    `a, b = x.chunk(2, 1)` unpacks. The values serve only for shapes and
    structure (an in-place module may change an earlier value; shapes stay)."""

    def __init__(self, example_inputs=None, moduleop=True):
        super().__init__()
        self.moduleop = moduleop
        self.concrete = example_inputs is not None
        # Copies: an in-place module run on them must not change the caller's input.
        self.examples = [x.clone() if isinstance(x, torch.Tensor) else x
                         for x in example_inputs or ()]
        self.values = {}
        self.evaluating = False  # running a node on real values: modules run untraced

    def call_module(self, m, forward, args, kwargs):
        if self.evaluating:
            return forward(*args, **kwargs)
        return super().call_module(m, forward, args, kwargs)

    def getattr(self, attr, attr_val, parameter_proxy_cache):
        if self.evaluating:
            return attr_val  # a parameter's real value, not a get_attr proxy
        return super().getattr(attr, attr_val, parameter_proxy_cache)

    def is_leaf_module(self, m, qualname):
        return (self.moduleop and hasattr(m, "pnnx_type")) or super().is_leaf_module(m, qualname)

    def proxy(self, node):
        return _ConcreteProxy(node, self)

    def create_proxy(self, kind, target, args, kwargs, name=None, type_expr=None,
                     proxy_factory_fn=None):
        p = super().create_proxy(kind, target, args, kwargs, name, type_expr, proxy_factory_fn)
        if not self.concrete or not isinstance(p, fx.Proxy):
            return p
        self.evaluating = True
        try:
            value = self._evaluate(p.node)
        finally:
            self.evaluating = False
        self.values[p.node] = value
        if kind == "call_method" and target in ("size", "dim"):
            return value  # a plain int or torch.Size: the node is left unused and removed
        return p

    def _evaluate(self, node):
        def load(a):
            # get_attr nodes of tensor constants are made without create_proxy
            return fx.node.map_arg(
                a, lambda n: self.values[n] if n in self.values else self._evaluate(n))
        args, kwargs = load(node.args), load(node.kwargs)
        if node.op == "placeholder":
            return self.examples[sum(n.op == "placeholder" for n in self.values)]
        if node.op == "get_attr":
            value = self.root
            for part in node.target.split("."):
                value = getattr(value, part)
            return value
        if node.op == "call_module":
            return self.root.get_submodule(node.target)(*args, **kwargs)
        if node.op == "call_function":
            return node.target(*args, **kwargs)
        if node.op == "call_method":
            return getattr(args[0], node.target)(*args[1:], **kwargs)
        return None


def trace(module, example_inputs, moduleop=True):
    """fx-trace `module` on `example_inputs` and record every node's output
    shape (node.meta['tensor_meta']). moduleop=False traces into the modules
    that would export themselves as one operator (`pnnx_type`), as pnnx
    without its `moduleop` option does."""
    with torch.no_grad():
        tracer = Tracer(example_inputs, moduleop)
        graph = tracer.trace(module)
    gm = fx.GraphModule(module, graph)
    gm.graph.eliminate_dead_code()  # the size() calls answered with numbers
    gm.recompile()
    ShapeProp(gm).propagate(*example_inputs)
    return gm


def _shape(node):
    meta = node.meta.get("tensor_meta")
    if meta is None or not hasattr(meta, "shape"):
        raise NotImplementedError("node %s does not produce a single tensor" % node.name)
    return tuple(meta.shape)


def _shapes(node):
    """The output shapes of a node that returns a tuple of tensors (torch.chunk)."""
    meta = node.meta.get("tensor_meta")
    if not isinstance(meta, (tuple, list)) or not all(hasattr(m, "shape") for m in meta):
        raise NotImplementedError("node %s does not produce tensors" % node.name)
    return [tuple(m.shape) for m in meta]


def _is_identity(node, gm):
    """Nodes that return their input unchanged in eval mode, left out of the
    file as pnnx leaves them out: dropout, nn.Identity, Tensor.contiguous,
    torchvision's stochastic_depth (a residual branch dropped only in training)."""
    if node.op == "call_module":
        return isinstance(gm.get_submodule(node.target), _IDENTITY_MODULES)
    if node.op == "call_method":
        return node.target == "contiguous"
    if node.op == "call_function" and getattr(node.target, "__name__", "") == "stochastic_depth":
        training = node.args[3] if len(node.args) > 3 else node.kwargs.get("training", True)
        if training:
            raise NotImplementedError("stochastic_depth in training mode (%s)" % node.name)
        return True
    return False


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


def _expression(node, inputs, consts):
    """Build PNNX's prefix expression text; `inputs` collects the tensor operands
    in order of first use, each referenced as @index. A folded constant of one
    element (YOLOv5's stride) is written as a number, as pnnx does."""
    def term(a):
        if not isinstance(a, fx.Node):
            return _literal(a)
        if a in consts and consts[a].numel() == 1 and consts[a].dim() == 0:
            return _literal(float(consts[a]))
        if a not in consts and _inlined(a):
            return _expression(a, inputs, consts)
        if a not in inputs:
            inputs.append(a)
        return "@%d" % inputs.index(a)

    if node.target in _UNARY:
        return "%s(%s)" % (_UNARY[node.target], term(node.args[0]))
    if node.kwargs:
        raise NotImplementedError("keyword arguments on %s" % node.target)
    return "%s(%s,%s)" % (_BINARY[node.target], term(node.args[0]), term(node.args[1]))


def _slice(node):
    """x[..., a:b] and the like (one dimension sliced) as pnnx's Tensor.slice,
    its dim counted with the batch as 0 and its ends within the dimension."""
    shape = _shape(node.args[0])
    index = node.args[1] if isinstance(node.args[1], tuple) else (node.args[1],)
    if index.count(Ellipsis) == 1:
        at = index.index(Ellipsis)
        index = index[:at] + (slice(None),) * (len(shape) - len(index) + 1) + index[at + 1:]
    sliced = [(d, s) for d, s in enumerate(index) if s != slice(None)]
    if len(sliced) != 1 or not isinstance(sliced[0][1], slice) or len(index) > len(shape):
        raise NotImplementedError("indexing %r (%s): only a slice of one dimension" %
                                  (node.args[1], node.name))
    dim, s = sliced[0]
    start, end, step = s.indices(shape[dim])
    return "Tensor.slice", dict(dim=dim, end=end, start=start, step=step)


def _is_constant(node, consts):
    """A node computed from module attributes only (YOLOv5's grid, anchors and
    strides): folded at export time, as pnnx folds them."""
    if node.op == "get_attr":
        return True
    inputs = node.all_input_nodes
    return (node.op in ("call_function", "call_method") and bool(inputs)
            and all(n in consts for n in inputs))


def _fold(gm, node, consts):
    if node.op == "get_attr":
        value = gm
        for part in node.target.split("."):
            value = getattr(value, part)
        return value.detach() if isinstance(value, torch.Tensor) else value
    args = fx.node.map_arg(node.args, lambda n: consts[n])
    kwargs = fx.node.map_arg(node.kwargs, lambda n: consts[n])
    if node.op == "call_method":
        return getattr(args[0], node.target)(*args[1:], **kwargs)
    return node.target(*args, **kwargs)


def _function_op(node):
    """call_function / call_method nodes other than arithmetic: (type, params)."""
    def arg(i, key, default):
        return node.args[i] if len(node.args) > i else node.kwargs.get(key, default)

    name = node.target  # a function object, or a method name string
    if name in (torch.sigmoid, "sigmoid"):
        return "F.sigmoid", {}
    if name is F.mish:
        return "F.mish", {}
    if name in (torch.permute, "permute"):
        dims = node.args[1:] if name == "permute" else (arg(1, "dims", None),)
        if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
            dims = dims[0]
        return "Tensor.permute", dict(dims=tuple(dims))
    if name is operator.getitem:
        return _slice(node)
    if name in (torch.flatten, "flatten"):
        return "torch.flatten", dict(start_dim=arg(1, "start_dim", 0), end_dim=arg(2, "end_dim", -1))
    if name is torch.cat:
        return "torch.cat", dict(dim=arg(1, "dim", 0))
    if name in (torch.mean, "mean"):
        dim = arg(1, "dim", None)
        if dim is None:
            raise NotImplementedError("torch.mean over every dimension (%s)" % node.name)
        return "torch.mean", dict(dim=tuple(dim) if isinstance(dim, (tuple, list)) else (dim,),
                                  keepdim=arg(2, "keepdim", False))
    if name in (torch.chunk, "chunk"):
        return "torch.chunk", dict(chunks=arg(1, "chunks", None), dim=arg(2, "dim", 0))
    if name in (torch.transpose, "transpose"):
        return "torch.transpose", dict(dim0=arg(1, "dim0", None), dim1=arg(2, "dim1", None))
    if name is F.adaptive_avg_pool2d:
        return "F.adaptive_avg_pool2d", dict(output_size=_pair(arg(1, "output_size", None)))
    if name is F.max_pool2d:
        kernel = _pair(arg(1, "kernel_size", None))
        stride = arg(2, "stride", None)
        return "F.max_pool2d", dict(
            ceil_mode=arg(5, "ceil_mode", False), dilation=_pair(arg(4, "dilation", 1)),
            kernel_size=kernel, padding=_pair(arg(3, "padding", 0)),
            return_indices=arg(6, "return_indices", False),
            stride=kernel if stride is None or stride == [] else _pair(stride))
    if name is F.interpolate:
        size, scale = arg(1, "size", None), arg(2, "scale_factor", None)
        params = dict(align_corners=bool(arg(4, "align_corners", False)),
                      mode=arg(3, "mode", "nearest"))
        if size is not None:
            params["size"] = _pair(size)
        if scale is not None:
            params["scale_factor"] = tuple(float(v) for v in _pair(scale))
        recompute = arg(5, "recompute_scale_factor", None)
        if recompute is not None:
            params["recompute_scale_factor"] = bool(recompute)
        return "F.interpolate", params
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
    consts = {}                  # fx node -> its folded value (a tensor)
    seen_modules, counters = set(), {}

    def unique_name(prefix):
        n = counters.get(prefix, 0)
        counters[prefix] = n + 1
        return "%s_%d" % (prefix, n)

    def operand(n):
        """The operand of node n; a folded constant becomes a pnnx.Attribute
        where it is first used as a tensor."""
        if n not in value and n in consts:
            c = consts[n]
            if not isinstance(c, torch.Tensor) or c.dim() == 0:
                raise NotImplementedError("constant %r used as a tensor (%s)" % (c, n.name))
            op = Operator("pnnx.Attribute", unique_name("pnnx_fold"), [], attrs={"data": c})
            op.outputs.append(Operand(tuple(c.shape)))
            ops.append(op)
            value[n] = op.outputs[0]
        return value[n]

    def emit(type_, name, in_nodes, node, params=None, attrs=None):
        op = Operator(type_, name, [operand(n) for n in in_nodes], params, attrs)
        meta = node.meta.get("tensor_meta")
        # Several outputs (torch.chunk): one operand each, read through getitem
        # nodes. (One tensor's TensorMetadata is a named tuple too.)
        if isinstance(meta, (tuple, list)) and not hasattr(meta, "shape"):
            op.outputs = [Operand(shape) for shape in _shapes(node)]
            value[node] = list(op.outputs)
        else:
            op.outputs.append(Operand(_shape(node)))
            value[node] = op.outputs[0]
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
        elif _is_constant(node, consts):
            consts[node] = _fold(gm, node, consts)
        elif _is_identity(node, gm):
            value[node] = value[_flat_nodes(node.args[:1])[0]]
        elif (node.op == "call_function" and node.target is operator.getitem
              and isinstance(value.get(node.args[0]), list)):
            value[node] = value[node.args[0]][node.args[1]]  # one output of a multi-output op
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
            expr = _expression(node, inputs, consts)
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


def export(module, example_inputs, param_path, bin_path=None, fold_bn=True, moduleop=True):
    """Trace `module` (in eval mode) on `example_inputs` and write the PNNX files.
    Returns the operator list. With bin_path=None only the .param is written.
    moduleop=False writes modules with a `pnnx_type` (YOLOv5's Detect) as the
    operators they are made of instead of as one operator."""
    module = module.eval()
    with torch.no_grad():
        ops = convert(trace(module, example_inputs, moduleop), fold_bn=fold_bn)
    write_param(ops, param_path)
    if bin_path is not None:
        write_bin(ops, bin_path)
    return ops
