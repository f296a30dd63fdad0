#!/usr/bin/python3
"""Draws the CLI's default test image, shapes.png: a few flat coloured shapes on
a soft gradient, 640x480 (not square, so `kuiper detect` really letterboxes).
No third-party photo is needed and the file regenerates byte for byte:

    /usr/bin/python3 final_project/data/make_shapes.py
"""
import os

import numpy as np
from PIL import Image, ImageDraw

WIDTH, HEIGHT = 640, 480
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "shapes.png")


def main():
    # A vertical sky-to-ground gradient, so the resize has something to blend.
    t = np.linspace(0.0, 1.0, HEIGHT, dtype=np.float64)[:, None, None]
    top, bottom = np.array([200, 225, 250]), np.array([120, 170, 110])
    pixels = (top * (1 - t) + bottom * t).repeat(WIDTH, axis=1).round().astype(np.uint8)
    image = Image.fromarray(pixels, "RGB")
    draw = ImageDraw.Draw(image)
    draw.ellipse((60, 60, 220, 220), fill=(220, 40, 40), outline=(90, 10, 10), width=4)
    draw.rectangle((300, 90, 560, 250), fill=(40, 160, 60), outline=(10, 60, 20), width=4)
    draw.polygon([(120, 440), (250, 260), (380, 440)], fill=(40, 70, 200), outline=(10, 20, 90))
    draw.ellipse((430, 300, 610, 400), fill=(240, 200, 40), outline=(120, 90, 0), width=4)
    for i in range(6):  # a striped post: thin detail for the resize to keep or lose
        draw.rectangle((270 + 6 * i, 280, 272 + 6 * i, 460), fill=(30, 30, 30))
    image.save(OUT, optimize=False)
    print("wrote %s (%d bytes)" % (OUT, os.path.getsize(OUT)))


if __name__ == "__main__":
    main()
