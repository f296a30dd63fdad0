#!/usr/bin/python3
"""A small YOLOv5 Detect head (models/yolov5s.py, unchanged) exported plainly
by torch.onnx.export, with a seeded input and PyTorch's output, for the
importer's Detect-head recognition tests (onnx/test/test_detect_head.cpp).

    /usr/bin/python3 onnx/test/data/make_detect_head.py

Writes next to this script: detect_head.onnx (opset 11), detect_head_opset13.onnx
(Unsqueeze takes its axes as an input there), detect_head.x{0,1,2}.npy (a batch of 2)
and detect_head.output.npy; detect_head_split.onnx and detect_head_split.output.npy,
the same head written the way later Ultralytics releases write it (SplitDetect), which
the importer does not fuse and converts node by node. Needs Debian's /usr/bin/python3 (python3-torch, python3-onnx).
"""
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(HERE))))

from models.yolov5s import Detect  # noqa: E402


class SplitDetect(Detect):
    """Detect as later Ultralytics releases write it: one split of the last axis
    into (xy, wh, conf), the grid already shifted by -0.5, the anchors expanded
    to every cell. The same numbers as Detect's, in another graph."""

    def forward(self, xs):
        out = []
        for i, x in enumerate(xs):
            bs, _, ny, nx = x.shape
            y = self.m[i](x).view(bs, self.na, self.no, ny, nx).permute(0, 1, 3, 4, 2).sigmoid()
            gy, gx = torch.meshgrid(torch.arange(ny), torch.arange(nx), indexing="ij")
            grid = torch.stack((gx, gy), -1).view(1, 1, ny, nx, 2).float() - 0.5
            anchor_grid = self.anchors[i].view(1, self.na, 1, 1, 2).expand(1, self.na, ny, nx, 2)
            xy, wh, conf = y.split((2, 2, self.nc + 1), 4)
            xy = (xy * 2 + grid) * self.strides[i]
            wh = (wh * 2) ** 2 * anchor_grid
            out.append(torch.cat((xy, wh, conf), 4).view(bs, -1, self.no))
        return torch.cat(out, 1)


class Head(torch.nn.Module):
    """Detect takes a list; torch.onnx.export wants one argument per input."""

    def __init__(self, detect=Detect):
        super().__init__()
        self.detect = detect(nc=2, ch=(4, 8, 16))

    def forward(self, x0, x1, x2):
        return self.detect([x0, x1, x2])


def main():
    torch.manual_seed(0)
    head = Head().eval()
    gen = torch.Generator().manual_seed(1)
    xs = [torch.randn(2, c, s, s, generator=gen) for c, s in ((4, 8), (8, 4), (16, 2))]
    with torch.no_grad():
        y = head(*xs)
        for opset, suffix in ((11, ""), (13, "_opset13")):
            torch.onnx.export(head, tuple(xs), os.path.join(HERE, "detect_head%s.onnx" % suffix),
                              opset_version=opset, input_names=["x0", "x1", "x2"],
                              output_names=["output"], do_constant_folding=True)
    for i, x in enumerate(xs):
        np.save(os.path.join(HERE, "detect_head.x%d.npy" % i), x.numpy())
    np.save(os.path.join(HERE, "detect_head.output.npy"), y.numpy())
    # The same weights in SplitDetect: the same inputs, PyTorch's own output.
    split = Head(SplitDetect).eval()
    split.load_state_dict(head.state_dict())
    with torch.no_grad():
        y_split = split(*xs)
        torch.onnx.export(split, tuple(xs), os.path.join(HERE, "detect_head_split.onnx"),
                          opset_version=13, input_names=["x0", "x1", "x2"],
                          output_names=["output"], do_constant_folding=True)
    np.save(os.path.join(HERE, "detect_head_split.output.npy"), y_split.numpy())


if __name__ == "__main__":
    main()
