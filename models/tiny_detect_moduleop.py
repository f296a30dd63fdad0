"""tiny_detect (models/tiny.py) with its Detect head in the form the real pnnx
writes when converting with `moduleop=models.yolo.Detect`.

Our exporter writes models.yolo.Detect with params nc, na and attributes
anchors (levels, na, 2) and strides (levels). pnnx keeps the module's own
parameters (m.{i}.weight, m.{i}.bias) and captures the tensors Ultralytics'
Detect.forward computes as numbered attributes, with no params:

  - the strides (levels)
  - per level i, grid[i] (1, na, ny, nx, 2): each cell's (x, y) - 0.5 (v6.1+)
  - per level i, anchor_grid[i] (1, na, ny, nx, 2): anchor a's (w, h) in pixels

Current pnnx numbers them pnnx_00..pnnx_06 in the order forward uses them
(grid 0, strides, anchor grid 0, grid 1, anchor grid 1, grid 2, anchor grid 2);
older pnnx wrote pnnx_0..pnnx_6 in another order (pnnx_5 the strides, pnnx_6,
pnnx_3, pnnx_1 the grids of levels 0, 1, 2, pnnx_4, pnnx_2, pnnx_0 their
anchor grids). The engine recognises them by content, so both files below must
give tiny_detect's output (models/fixtures/tiny_detect.output.npy, its input
tiny_detect.input.npy):

  /usr/bin/python3 -m models.tiny_detect_moduleop    (from the repository root)

writes models/fixtures/tiny_detect_moduleop{,_old}.pnnx.{param,bin},
byte-identical on every run.
"""
import os

import numpy as np
import torch

from models.tiny import TINY, build
from tools.pnnx_export import convert, trace, write_bin, write_param

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")


def captured_constants(detect, sizes):
    """(kind, level, array) in the order Detect.forward uses them."""
    out = []
    for i, (ny, nx) in enumerate(sizes):
        yv, xv = torch.meshgrid(torch.arange(ny, dtype=torch.float32),
                                torch.arange(nx, dtype=torch.float32), indexing="ij")
        grid = torch.stack((xv, yv), 2).expand(1, detect.na, ny, nx, 2) - 0.5
        anchor_grid = detect.anchors[i].view(1, detect.na, 1, 1, 2).expand(1, detect.na, ny, nx, 2)
        out.append(("grid", i, grid))
        if i == 0:
            out.append(("strides", None, detect.strides))
        out.append(("anchor_grid", i, anchor_grid))
    return [(kind, level, np.ascontiguousarray(t.numpy(), dtype=np.float32))
            for kind, level, t in out]


# Older pnnx's names: (kind, level) -> key.
OLD_NAMES = {("strides", None): "pnnx_5", ("grid", 0): "pnnx_6", ("grid", 1): "pnnx_3",
             ("grid", 2): "pnnx_1", ("anchor_grid", 0): "pnnx_4", ("anchor_grid", 1): "pnnx_2",
             ("anchor_grid", 2): "pnnx_0"}


def main():
    model = build("tiny_detect")
    shape = TINY["tiny_detect"][1]
    x = torch.from_numpy(np.load(os.path.join(FIXTURES, "tiny_detect.input.npy")))
    assert tuple(x.shape) == shape
    with torch.no_grad():
        ops = convert(trace(model.eval(), (x,)))
        expected = model(x).numpy()
    reference = np.load(os.path.join(FIXTURES, "tiny_detect.output.npy"))
    assert np.array_equal(expected, reference), "tiny_detect's fixture is out of date"
    detect_op = next(op for op in ops if op.type == "models.yolo.Detect")
    sizes = [operand.shape[2:4] for operand in detect_op.inputs]
    constants = captured_constants(model.detect, sizes)
    weights = {k: v for k, v in detect_op.attrs.items() if k.startswith("m.")}
    for suffix, name_of in (("", lambda n, kind, level: "pnnx_%02d" % n),
                            ("_old", lambda n, kind, level: OLD_NAMES[(kind, level)])):
        detect_op.params = {}
        detect_op.attrs = dict(weights)
        for n, (kind, level, array) in enumerate(constants):
            detect_op.attrs[name_of(n, kind, level)] = array
        base = os.path.join(FIXTURES, "tiny_detect_moduleop%s.pnnx" % suffix)
        write_param(ops, base + ".param")
        write_bin(ops, base + ".bin")
        print("wrote", base + ".{param,bin}")


if __name__ == "__main__":
    main()
