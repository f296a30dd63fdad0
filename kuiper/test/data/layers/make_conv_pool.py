#!/usr/bin/python3
"""PyTorch references for the convolution, pooling, linear and batch-norm layer tests.

    /usr/bin/python3 kuiper/test/data/layers/make_conv_pool.py

Writes kuiper/test/data/layers/conv_pool/<case>.<array>.npy: the input, PyTorch's
output and the module's weights (float32). Seeded: reruns write identical files.
The tests read the module's parameters from the CASES table mirrored in them.
"""
import os

import numpy as np
import torch
from torch import nn

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "conv_pool")

# case name -> (module, input shape)
CASES = {
    # ceil_mode: windows hang over the bottom/right edge
    "maxpool_ceil": (lambda: nn.MaxPool2d(3, stride=2, padding=1, ceil_mode=True), (2, 3, 7, 8)),
    # ceil_mode: a last window that would start in the right padding is dropped
    "maxpool_ceil_drop": (lambda: nn.MaxPool2d(2, stride=2, padding=1, ceil_mode=True),
                          (1, 2, 5, 5)),
    "maxpool_dilated": (lambda: nn.MaxPool2d((3, 2), stride=(2, 1), padding=(1, 0),
                                             dilation=(2, 1)), (1, 2, 9, 10)),
    "avgpool_ceil_exclude_pad": (lambda: nn.AvgPool2d(3, stride=2, padding=1, ceil_mode=True,
                                                      count_include_pad=False), (2, 3, 7, 8)),
    "avgpool_ceil_include_pad": (lambda: nn.AvgPool2d(3, stride=2, padding=1, ceil_mode=True,
                                                      count_include_pad=True), (2, 3, 7, 8)),
    "avgpool_rect": (lambda: nn.AvgPool2d((3, 2), stride=(2, 3), padding=(1, 0)), (1, 2, 9, 11)),
    "adaptive_3x4": (lambda: nn.AdaptiveAvgPool2d((3, 4)), (2, 3, 7, 10)),
    "adaptive_1x1": (lambda: nn.AdaptiveAvgPool2d((1, 1)), (1, 2, 5, 5)),
    "adaptive_grow": (lambda: nn.AdaptiveAvgPool2d((8, 3)), (1, 2, 4, 6)),
    "batchnorm_affine": (lambda: nn.BatchNorm2d(4, eps=1e-3), (2, 4, 5, 6)),
    "batchnorm_plain": (lambda: nn.BatchNorm2d(3, affine=False), (1, 3, 4, 4)),
    "linear_1d": (lambda: nn.Linear(8, 5), (3, 8)),
    "linear_2d_nobias": (lambda: nn.Linear(8, 6, bias=False), (2, 4, 8)),
    "conv_grouped": (lambda: nn.Conv2d(4, 6, (3, 5), stride=(2, 1), padding=(1, 2),
                                       dilation=(1, 2), groups=2), (2, 4, 11, 9)),
    # a window one row high, strides other than 1 and 2 (appended: the cases
    # above keep their random inputs)
    "maxpool_one_row": (lambda: nn.MaxPool2d((1, 3), stride=(3, 2), padding=(0, 1)),
                        (1, 2, 10, 9)),
    "maxpool_one_column": (lambda: nn.MaxPool2d((3, 1), stride=(2, 3), padding=(1, 0)),
                           (1, 2, 9, 10)),
    # YOLOv5s's SPPF window (5x5, stride 1) and a 4x4 one (no unrolled form)
    "maxpool_sppf": (lambda: nn.MaxPool2d(5, stride=1, padding=2), (2, 3, 9, 10)),
    "maxpool_four": (lambda: nn.MaxPool2d(4, stride=3, padding=2), (1, 2, 11, 10)),
}


def main():
    torch.manual_seed(0)
    os.makedirs(OUT, exist_ok=True)
    for name, (make, shape) in CASES.items():
        module = make().eval()
        if isinstance(module, nn.BatchNorm2d):
            module.running_mean.uniform_(-1, 1)
            module.running_var.uniform_(0.5, 2)
            if module.affine:
                module.weight.data.uniform_(0.5, 1.5)
                module.bias.data.uniform_(-1, 1)
        x = torch.randn(shape)
        with torch.no_grad():
            y = module(x)
        arrays = {"input": x, "output": y}
        for key, value in list(module.named_parameters()) + list(module.named_buffers()):
            if value.dtype == torch.float32:
                arrays[key] = value.detach()
        for key, value in arrays.items():
            np.save(os.path.join(OUT, "%s.%s.npy" % (name, key)),
                    value.numpy().astype(np.float32))


if __name__ == "__main__":
    main()
