#!/usr/bin/python3
"""Reference for final_project's per-class NMS, from torchvision:

    /usr/bin/python3 final_project/test/data/make_nms_ref.py

writes (byte-reproducible) into this folder:
    nms_boxes.npy  (300, 6) float32: x1, y1, x2, y2, score, class (3 classes),
                   seeded boxes crowded into a 160x160 field so many overlap;
                   scores distinct, so the greedy order is unambiguous
    nms_keep.npy   (K,) int64: indices torchvision.ops.batched_nms keeps at IoU
                   0.45, by descending score
"""
import os

import numpy as np
import torch
import torchvision

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    rng = np.random.default_rng(11)
    n = 300
    xy = rng.uniform(0, 100, size=(n, 2))
    wh = rng.uniform(10, 60, size=(n, 2))
    scores = rng.permutation(n) / n * 0.9 + 0.05
    classes = rng.integers(0, 3, size=n)
    boxes = np.concatenate([xy, xy + wh, scores[:, None], classes[:, None]], 1).astype(np.float32)
    t = torch.from_numpy(boxes)
    keep = torchvision.ops.batched_nms(t[:, :4], t[:, 4], t[:, 5].long(), 0.45)
    np.save(os.path.join(HERE, "nms_boxes.npy"), boxes)
    np.save(os.path.join(HERE, "nms_keep.npy"), keep.numpy().astype(np.int64))
    print("%d of %d boxes kept" % (len(keep), n))


if __name__ == "__main__":
    main()
