#!/usr/bin/python3
"""Draws the CLI's default test image, shapes.png: one shape of each kind the
trained models know (models/shapes.py), 640x480 (not square, so `kuiper detect`
really letterboxes). A large star sits in the middle, where `kuiper classify`
crops; a circle, a square, a triangle and a cross sit in the corners, for
`kuiper detect`. Drawn with the training images' own code, on a plain gradient
(no noise, so the PNG stays small), with the shapes' boxes beside it in
shapes.boxes.txt (the truth the detector test checks); both regenerate byte for byte:

    /usr/bin/python3 final_project/data/make_shapes.py
"""
import math
import os
import sys

import cv2
import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)

from models import shapes  # noqa: E402

WIDTH, HEIGHT = 640, 480
HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "shapes.png")
# The truth for the detector test (Cli.DetectFindsEachShapeOfTheDefaultImage):
# one line per shape, "class x1 y1 x2 y2" in pixels, the drawn outline's box.
BOXES = os.path.join(HERE, "shapes.boxes.txt")

# (class, centre x, centre y, radius, angle in degrees, RGB colour)
LAYOUT = (
    ("star", 320, 240, 140, 0, (240, 190, 30)),
    ("circle", 82, 86, 62, 0, (220, 50, 50)),
    ("square", 558, 90, 64, 15, (30, 120, 40)),
    ("triangle", 86, 392, 70, 0, (50, 80, 210)),
    ("cross", 556, 392, 64, 10, (150, 60, 180)),
)


def main():
    # A vertical sky-to-ground gradient, so the resize has something to blend.
    t = np.linspace(0.0, 1.0, HEIGHT, dtype=np.float32)[:, None, None]
    top, bottom = np.array([200, 225, 250], np.float32), np.array([120, 170, 110], np.float32)
    img = np.ascontiguousarray(np.broadcast_to(top * (1 - t) + bottom * t, (HEIGHT, WIDTH, 3)))
    rng = np.random.default_rng(0)  # the shapes' own proportions (star points, cross arms)
    lines = []
    for name, cx, cy, r, angle, colour in LAYOUT:
        box = shapes.draw_shape(img, shapes.CLASSES.index(name), cx, cy, r, rng, np.array(colour),
                                angle=math.radians(angle))
        lines.append("%s %.1f %.1f %.1f %.1f\n" % ((name,) + tuple(box)))
    rgb = np.clip(img + 0.5, 0, 255).astype(np.uint8)
    cv2.imwrite(OUT, cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR))
    with open(BOXES, "w") as f:
        f.writelines(lines)
    print("wrote %s (%d bytes) and %s" % (OUT, os.path.getsize(OUT), BOXES))


if __name__ == "__main__":
    main()
