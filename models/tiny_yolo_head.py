"""A tiny YOLOv5 decoding head in the graph shape the real pnnx writes.

`torch.jit.trace` of an Ultralytics YOLOv5s, converted by Tencent's pnnx without
`moduleop`, keeps the Detect head as plain operators on 5-D tensors:

  nn.Conv2d -> Tensor.reshape (1,na,no,ny,nx) -> Tensor.permute (0,1,3,4,2)
  -> F.sigmoid -> torch.tensor_split dim=4 (3 outputs: xy, wh, conf)
  xy: pnnx.Expression mul(add(mul(@0,2),@1),@2) with the grid (pnnx.Attribute)
      and the stride (torch.tensor)
  wh: pnnx.Expression mul(pow(mul(@0,2),2),@1) with the anchor grid (pnnx.Attribute)
  -> torch.cat dim=4 -> Tensor.reshape (1,na*ny*nx,no)

Our exporter (tools/pnnx_export.py) traces with torch.fx and writes the head
as one models.yolo.Detect operator, so this file writes that graph itself,
line by line in pnnx's format, with its writer. One level, na=3 anchors,
nc=2 classes (no=7), a 4 x 5 map. The grid (1,1,ny,nx,2) and the anchor grid
(1,na,1,1,2) are kept unexpanded, so the expressions broadcast on 5-D.
The reference output is this module's PyTorch forward.

  /usr/bin/python3 -m models.tiny_yolo_head    (from the repository root)

writes models/fixtures/tiny_yolo_head.{pnnx.param,pnnx.bin,input.npy,output.npy},
byte-identical on every run.
"""
import os

import numpy as np
import torch
from torch import nn

from tools.pnnx_export import Operand, Operator, number_operands, write_bin, write_param

NA, NC, NY, NX, CIN, STRIDE = 3, 2, 4, 5, 8, 8.0
NO = NC + 5
ANCHORS = [[10.0, 13.0], [16.0, 30.0], [33.0, 23.0]]  # pixels, one (w, h) per anchor


class TinyYoloHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(CIN, NA * NO, 1)
        yv, xv = torch.meshgrid(torch.arange(NY, dtype=torch.float32),
                                torch.arange(NX, dtype=torch.float32), indexing="ij")
        self.register_buffer("grid", torch.stack((xv, yv), 2).view(1, 1, NY, NX, 2) - 0.5)
        self.register_buffer("anchor_grid", torch.tensor(ANCHORS).view(1, NA, 1, 1, 2))
        self.stride = STRIDE

    def forward(self, x):  # Ultralytics Detect.forward for one level, batch 1
        p = self.conv(x).view(1, NA, NO, NY, NX).permute(0, 1, 3, 4, 2)
        xy, wh, conf = p.sigmoid().split((2, 2, NC + 1), 4)
        xy = (xy * 2 + self.grid) * self.stride
        wh = (wh * 2) ** 2 * self.anchor_grid
        return torch.cat((xy, wh, conf), 4).view(1, NA * NY * NX, NO)


def graph(model):
    """The operator list, as pnnx writes the traced head."""
    def op(type_, name, inputs, shapes, params=None, attrs=None):
        o = Operator(type_, name, inputs, params, attrs)
        o.outputs = [Operand(s) for s in shapes]
        ops.append(o)
        return o.outputs

    ops = []
    five = (1, NA, NY, NX)
    (x,) = op("pnnx.Input", "pnnx_input_0", [], [(1, CIN, NY, NX)])
    (c,) = op("nn.Conv2d", "model.24.m.0", [x], [(1, NA * NO, NY, NX)],
              {"bias": True, "dilation": (1, 1), "groups": 1, "in_channels": CIN,
               "kernel_size": (1, 1), "out_channels": NA * NO, "padding": (0, 0),
               "padding_mode": "zeros", "stride": (1, 1)},
              {"weight": model.conv.weight, "bias": model.conv.bias})
    (r,) = op("Tensor.reshape", "Tensor.reshape_0", [c], [(1, NA, NO, NY, NX)],
              {"shape": (1, NA, NO, NY, NX)})
    (p,) = op("Tensor.permute", "Tensor.permute_0", [r], [five + (NO,)], {"dims": (0, 1, 3, 4, 2)})
    (s,) = op("F.sigmoid", "F.sigmoid_0", [p], [five + (NO,)])
    xy, wh, conf = op("torch.tensor_split", "Tensor.slice_38", [s],
                      [five + (2,), five + (2,), five + (NC + 1,)],
                      {"dim": 4, "indices": (2, 4)})
    (g,) = op("pnnx.Attribute", "pnnx_fold_grid", [], [(1, 1, NY, NX, 2)], attrs={"data": model.grid})
    (t,) = op("torch.tensor", "torch.tensor_0", [], [()], {"data": STRIDE})
    (a,) = op("pnnx.Attribute", "pnnx_fold_anchor_grid", [], [(1, NA, 1, 1, 2)],
              attrs={"data": model.anchor_grid})
    (exy,) = op("pnnx.Expression", "pnnx_expr_1", [xy, g, t], [five + (2,)],
                {"expr": "mul(add(mul(@0,2),@1),@2)"})
    (ewh,) = op("pnnx.Expression", "pnnx_expr_0", [wh, a], [five + (2,)],
                {"expr": "mul(pow(mul(@0,2),2),@1)"})
    (y,) = op("torch.cat", "torch.cat_0", [exy, ewh, conf], [five + (NO,)], {"dim": 4})
    (v,) = op("Tensor.reshape", "Tensor.reshape_1", [y], [(1, NA * NY * NX, NO)],
              {"shape": (1, NA * NY * NX, NO)})
    op("pnnx.Output", "pnnx_output_0", [v], [])
    number_operands(ops)
    return ops


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    base = os.path.join(root, "models", "fixtures", "tiny_yolo_head")
    torch.manual_seed(0)
    model = TinyYoloHead().eval()
    x = torch.randn(1, CIN, NY, NX, generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        out = model(x)
        ops = graph(model)
    write_param(ops, base + ".pnnx.param")
    write_bin(ops, base + ".pnnx.bin")
    np.save(base + ".input.npy", x.numpy().astype("<f4"))
    np.save(base + ".output.npy", out.numpy().astype("<f4"))
    print("wrote %s.* (output %s, max |y| %.3f)" % (base, tuple(out.shape), out.abs().max()))


if __name__ == "__main__":
    main()
