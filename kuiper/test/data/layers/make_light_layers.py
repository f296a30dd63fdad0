"""PyTorch references for the light layers' tests (upsample, softmax, cat).

Run with Debian's python3 (it has torch) from the repository root:
    /usr/bin/python3 kuiper/test/data/layers/make_light_layers.py
Seeded: running it again writes identical files.
"""
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

OUT = Path(__file__).resolve().parent / "light"


def save(name, tensor):
    np.save(OUT / f"{name}.npy", tensor.detach().numpy().astype(np.float32))


def main():
    OUT.mkdir(exist_ok=True)
    torch.manual_seed(7)
    x = torch.randn(2, 3, 5, 7)  # batch 2, odd sizes so the edges matter
    save("upsample_input", x)
    cases = {
        "nearest_scale2": dict(scale_factor=2.0, mode="nearest"),
        "nearest_scale_1_5x2_5": dict(scale_factor=(1.5, 2.5), mode="nearest"),
        "nearest_size_8x3": dict(size=(8, 3), mode="nearest"),
        "bilinear_scale2": dict(scale_factor=2.0, mode="bilinear", align_corners=False),
        "bilinear_scale2_corners": dict(scale_factor=2.0, mode="bilinear", align_corners=True),
        "bilinear_size_9x4": dict(size=(9, 4), mode="bilinear", align_corners=False),
        "bilinear_size_9x4_corners": dict(size=(9, 4), mode="bilinear", align_corners=True),
    }
    for name, kwargs in cases.items():
        save(f"upsample_{name}", F.interpolate(x, **kwargs))

    s = torch.randn(2, 3, 4, 5) * 10  # large values: softmax must stay finite
    save("softmax_input", s)
    for dim in (1, 2, 3, -1):
        save(f"softmax_dim{dim}", torch.softmax(s, dim=dim))


if __name__ == "__main__":
    main()
