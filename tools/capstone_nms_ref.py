#!/usr/bin/python3
"""torchvision's answer for course8_capstone's NMS test (test/test_postprocess.cpp):

    /usr/bin/python3 tools/capstone_nms_ref.py

prints the C++ initialisers the test embeds: the hand-made boxes (x1, y1, x2, y2,
score, class) and the indices torchvision.ops.batched_nms keeps at IoU 0.45, best
first. Each group of boxes is there to catch one mistake (the comments below).
"""
import torch
import torchvision

IOU = 0.45
BOXES = [
    # Same class, IoU 0.68: the lower score (listed first, so input order is not score
    # order) goes.
    (1, 1, 11, 11, 0.80, 0),
    (0, 0, 10, 10, 0.90, 0),
    # The same square as the first, another class: kept (NMS is per class).
    (1, 1, 11, 11, 0.85, 1),
    # Same class, IoU 0.25: both kept.
    (20, 0, 30, 10, 0.70, 0),
    (26, 0, 36, 10, 0.60, 0),
    # 4x4 boxes with IoU 0.43 (kept); with the "+1" pixel convention 0.52 (dropped).
    (40, 0, 44, 4, 0.50, 2),
    (41.6, 0, 45.6, 4, 0.40, 2),
    # A chain: the second overlaps the first (0.54, dropped), the third overlaps only the
    # dropped second (0.54) and the first by 0.25, so it stays.
    (60, 0, 70, 10, 0.95, 1),
    (63, 0, 73, 10, 0.75, 1),
    (66, 0, 76, 10, 0.65, 1),
]


def main():
    t = torch.tensor(BOXES, dtype=torch.float32)
    keep = torchvision.ops.batched_nms(t[:, :4], t[:, 4], t[:, 5].long(), IOU).tolist()
    print("// x1, y1, x2, y2, score, class")
    for b in BOXES:
        print("{%sf, %sf, %sf, %sf, %sf, %d}," % (*(repr(float(v)) for v in b[:5]), b[5]))
    print("// kept at IoU %s, best first" % IOU)
    print("{%s}" % ", ".join(map(str, keep)))


if __name__ == "__main__":
    main()
