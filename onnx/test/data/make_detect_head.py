#!/usr/bin/python3
"""A small YOLOv5 Detect head (models/yolov5s.py, unchanged) exported plainly
by torch.onnx.export, with a seeded input and PyTorch's output, for the
importer's Detect-head recognition tests (onnx/test/test_detect_head.cpp).

    /usr/bin/python3 onnx/test/data/make_detect_head.py

Writes next to this script: detect_head.onnx (opset 11), detect_head_opset13.onnx
(Unsqueeze takes its axes as an input there), detect_head.x{0,1,2}.npy (a batch of 2)
and detect_head.output.npy. Needs Debian's /usr/bin/python3 (python3-torch, python3-onnx).
"""
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(HERE))))

from models.yolov5s import Detect  # noqa: E402


class Head(torch.nn.Module):
    """Detect takes a list; torch.onnx.export wants one argument per input."""

    def __init__(self):
        super().__init__()
        self.detect = Detect(nc=2, ch=(4, 8, 16))

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


if __name__ == "__main__":
    main()
