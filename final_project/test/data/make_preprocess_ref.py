#!/usr/bin/python3
"""Reference for final_project's classification preprocessing, from PyTorch:

    /usr/bin/python3 final_project/test/data/make_preprocess_ref.py

writes (byte-reproducible) into this folder:
    tiny.png                  a seeded 37x23 RGB noise image
    tiny_resize16_crop14.npy  (3,14,14): shorter side to 16, centre crop 14 (a downscale)
    tiny_resize30_crop28.npy  (3,28,28): shorter side to 30, centre crop 28 (an upscale)
The recipe is torchvision's Resize + CenterCrop on a float tensor: bilinear,
half-pixel centres (align_corners=False), no antialiasing, long side
int(size * long / short), crop offset int(round((h - crop) / 2)).
"""
import os

import numpy as np
import torch
import torch.nn.functional as F
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))


def resize_crop(x, size, crop):
    h, w = x.shape[-2:]
    short, long = min(h, w), max(h, w)
    new_long = int(size * long / short)
    new_h, new_w = (size, new_long) if h <= w else (new_long, size)
    y = F.interpolate(x[None], size=(new_h, new_w), mode="bilinear", align_corners=False)[0]
    top, left = int(round((new_h - crop) / 2.0)), int(round((new_w - crop) / 2.0))
    return y[:, top:top + crop, left:left + crop]


def main():
    rng = np.random.default_rng(7)
    pixels = rng.integers(0, 256, size=(23, 37, 3), dtype=np.uint8)
    Image.fromarray(pixels, "RGB").save(os.path.join(HERE, "tiny.png"))
    x = torch.from_numpy(pixels).permute(2, 0, 1).float() / 255.0
    for size, crop in ((16, 14), (30, 28)):
        out = resize_crop(x, size, crop).numpy().astype(np.float32)
        np.save(os.path.join(HERE, "tiny_resize%d_crop%d.npy" % (size, crop)), out)


if __name__ == "__main__":
    main()
