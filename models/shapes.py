"""A dataset made here: images of simple shapes, drawn from a seed.

Nothing can be downloaded, so the trained models (tools/train_shapes.py) learn
from pictures this file draws with NumPy and OpenCV. Every image comes from its
own seed, so image i of a split is the same on every machine and in every run:

    classification_image(seed) -> (uint8 RGB image, class index)
        one main shape, large and near the centre, sometimes a bar across it
        and smaller distractor shapes cut by the border
    detection_image(seed)      -> (uint8 RGB image, boxes (n, 4) x1 y1 x2 y2, classes (n,))
        one to five shapes anywhere, partly overlapping, some occluded

Shapes come in random sizes, positions, colours (always distinct from the
background) and rotations, on a noisy two-colour gradient. The splits use
disjoint seed ranges (SPLITS): the held-out test images are never trained on.

The preprocessing of each model is the CLI's, written again here in NumPy/OpenCV
so that training sees the pixels `kuiper classify` and `kuiper detect` feed the
engine: `classify_input` (shorter side to round(crop / 0.875), centre crop,
ImageNet mean/std) and `letterbox` (YOLOv5's, grey 114).
"""
import math

import cv2
import numpy as np

CLASSES = ("circle", "square", "triangle", "star", "cross")

# First seed of each split; a split's image i has seed SPLITS[split] + i.
SPLITS = {"train": 0, "test": 10_000_000, "samples": 20_000_000}

IMAGENET_MEAN = np.array([0.485, 0.456, 0.406], np.float32)
IMAGENET_STD = np.array([0.229, 0.224, 0.225], np.float32)


# ----------------------------------------------------------------------------
# Outlines: unit-size polygons centred on 0, radius about 1.

def _regular(n, phase):
    a = phase + 2 * math.pi * np.arange(n) / n
    return np.stack([np.cos(a), np.sin(a)], 1)


def _star(inner):
    a = -math.pi / 2 + math.pi * np.arange(10) / 5
    r = np.where(np.arange(10) % 2 == 0, 1.0, inner)
    return np.stack([r * np.cos(a), r * np.sin(a)], 1)


def _cross(arm):
    h = arm / 2
    return np.array([(-h, -1), (h, -1), (h, -h), (1, -h), (1, h), (h, h), (h, 1), (-h, 1),
                     (-h, h), (-1, h), (-1, -h), (-h, -h)], float)


def _outline(cls, rng):
    """Polygon (k, 2) of class `cls`, radius ~1, before rotation; circles are
    drawn as 64-gons so that every shape goes through the same code."""
    name = CLASSES[cls]
    if name == "circle":
        return _regular(64, 0.0)
    if name == "square":
        return _regular(4, math.pi / 4)
    if name == "triangle":
        return _regular(3, -math.pi / 2) * np.array([1.0, rng.uniform(0.85, 1.15)])
    if name == "star":
        return _star(rng.uniform(0.38, 0.5))
    return _cross(rng.uniform(0.34, 0.46))


def _colour(rng, avoid):
    """A saturated-enough colour at least 90 (RGB distance) from every colour in `avoid`."""
    for _ in range(50):
        c = rng.integers(0, 256, 3)
        if all(np.linalg.norm(c - np.asarray(a, float)) > 90 for a in avoid):
            return c
    return 255 - np.asarray(avoid[0], int)


def _background(rng, h, w):
    """A noisy gradient between two random colours; returns the image (float)
    and the two colours, which shapes must stay away from."""
    c0, c1 = rng.integers(0, 256, 3), rng.integers(0, 256, 3)
    angle = rng.uniform(0, 2 * math.pi)
    # t in [0, 1] along the gradient's direction; float32 keeps this cheap.
    tx = (math.cos(angle) * np.arange(w, dtype=np.float32) / w)[None, :]
    ty = (math.sin(angle) * np.arange(h, dtype=np.float32) / h)[:, None]
    t = tx + ty
    t -= t.min()
    t /= max(float(t.max()), 1e-6)
    img = c0.astype(np.float32) + t[..., None] * (c1 - c0).astype(np.float32)
    img += rng.standard_normal((h, w, 3), dtype=np.float32) * np.float32(rng.uniform(3, 20))
    return img, [c0, c1, (c0 + c1) / 2]


def draw_shape(img, cls, cx, cy, radius, rng, colour, angle=None):
    """Draws a filled shape of class index `cls` on a float RGB image, turned by
    `angle` radians (random if None); returns its box (x1, y1, x2, y2) in pixels."""
    pts = _outline(cls, rng)
    theta = rng.uniform(0, 2 * math.pi) if angle is None else angle
    rot = np.array([[math.cos(theta), -math.sin(theta)], [math.sin(theta), math.cos(theta)]])
    pts = pts @ rot.T * radius + np.array([cx, cy])
    # Fixed-point coordinates (4 fractional bits) keep sub-pixel positions.
    cv2.fillPoly(img, [np.round(pts * 16).astype(np.int32)], colour.tolist(), cv2.LINE_AA, 4)
    if rng.random() < 0.3:  # a darker outline, sometimes
        cv2.polylines(img, [np.round(pts * 16).astype(np.int32)], True,
                      (colour * 0.5).tolist(), int(rng.integers(1, 3)), cv2.LINE_AA, 4)
    return pts[:, 0].min(), pts[:, 1].min(), pts[:, 0].max(), pts[:, 1].max()


def _occlude(img, box, rng, avoid):
    """A bar of another colour across part of a box, 6%..18% of its width (or height):
    wider bars made a star with a bar across it look like a cross, even to a person."""
    x1, y1, x2, y2 = box
    w, h = x2 - x1, y2 - y1
    if rng.random() < 0.5:  # vertical bar
        bw = rng.uniform(0.06, 0.18) * w
        bx = rng.uniform(x1 - bw / 2, x2 - bw / 2)
        p1, p2 = (bx, y1 - 0.2 * h), (bx + bw, y2 + 0.2 * h)
    else:
        bh = rng.uniform(0.06, 0.18) * h
        by = rng.uniform(y1 - bh / 2, y2 - bh / 2)
        p1, p2 = (x1 - 0.2 * w, by), (x2 + 0.2 * w, by + bh)
    cv2.rectangle(img, tuple(int(round(v)) for v in p1), tuple(int(round(v)) for v in p2),
                  _colour(rng, avoid).tolist(), -1)


def _finish(img):
    return np.clip(img + 0.5, 0, 255).astype(np.uint8)


# ----------------------------------------------------------------------------
# The two kinds of images.

def classification_image(seed):
    """(RGB uint8 image of random size 64..160 px a side, class index)."""
    rng = np.random.default_rng([seed, 1])
    h, w = (int(v) for v in rng.integers(64, 161, 2))
    img, avoid = _background(rng, h, w)
    side = min(h, w)
    # Distractors first, so the main shape lies on top: small, centred outside the middle.
    for _ in range(int(rng.choice(3, p=[0.5, 0.3, 0.2]))):
        r = rng.uniform(0.08, 0.18) * side
        ang = rng.uniform(0, 2 * math.pi)
        cx = w / 2 + math.cos(ang) * rng.uniform(0.45, 0.6) * w
        cy = h / 2 + math.sin(ang) * rng.uniform(0.45, 0.6) * h
        draw_shape(img, int(rng.integers(len(CLASSES))), cx, cy, r, rng, _colour(rng, avoid))
    cls = int(rng.integers(len(CLASSES)))
    r = rng.uniform(0.2, 0.38) * side
    cx = w / 2 + rng.uniform(-0.12, 0.12) * side
    cy = h / 2 + rng.uniform(-0.12, 0.12) * side
    colour = _colour(rng, avoid)
    box = draw_shape(img, cls, cx, cy, r, rng, colour)
    if rng.random() < 0.3:
        _occlude(img, box, rng, avoid + [colour])
    return _finish(img), cls


def _iou(a, b):
    w = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    h = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = w * h
    area = lambda r: (r[2] - r[0]) * (r[3] - r[1])  # noqa: E731
    return inter / (area(a) + area(b) - inter)


def detection_image(seed):
    """(RGB uint8 image, boxes float32 (n, 4) x1 y1 x2 y2 in pixels, classes int64 (n,)).

    Sides are 128..320 px with an aspect ratio up to 4:3 either way, so the
    letterbox really scales and pads. Shapes have radii of 8%..30% of the
    shorter side (at least 6 px at the detector's 96-pixel input, and as large
    as the star of final_project/data/shapes.png), lie fully inside the image, and overlap a previous box by an
    IoU of at most 0.15 (later shapes are drawn on top)."""
    rng = np.random.default_rng([seed, 2])
    long_side = int(rng.integers(128, 321))
    short = int(round(long_side * rng.uniform(0.75, 1.0)))
    h, w = (short, long_side) if rng.random() < 0.6 else (long_side, short)
    img, avoid = _background(rng, h, w)
    boxes, classes = [], []
    for _ in range(int(rng.integers(1, 6))):
        for _attempt in range(20):
            r = rng.uniform(0.08, 0.3) * min(h, w)
            cx, cy = rng.uniform(r, w - r), rng.uniform(r, h - r)
            guess = (cx - r, cy - r, cx + r, cy + r)
            if all(_iou(guess, b) <= 0.15 for b in boxes):
                break
        else:
            continue
        cls = int(rng.integers(len(CLASSES)))
        colour = _colour(rng, avoid)
        box = draw_shape(img, cls, cx, cy, r, rng, colour)
        if rng.random() < 0.2:
            _occlude(img, box, rng, avoid + [colour])
        boxes.append(box)
        classes.append(cls)
    return (_finish(img), np.array(boxes, np.float32).reshape(-1, 4),
            np.array(classes, np.int64))


# ----------------------------------------------------------------------------
# The CLI's preprocessing (final_project/src/preprocess.cpp), for training and evaluation.

def classify_input(rgb8, crop):
    """(3, crop, crop) float32: shorter side to round(crop / 0.875) (bilinear, in
    float, no antialiasing), centre crop, ImageNet mean/std; as `kuiper classify`."""
    resize = int(round(crop / 0.875))
    h, w = rgb8.shape[:2]
    new_long = resize * max(h, w) // min(h, w)
    size = (new_long, resize) if h <= w else (resize, new_long)
    img = cv2.resize(rgb8.astype(np.float32) / 255, size, interpolation=cv2.INTER_LINEAR)
    top = int(round((img.shape[0] - crop) / 2))
    left = int(round((img.shape[1] - crop) / 2))
    img = img[top:top + crop, left:left + crop]
    return ((img - IMAGENET_MEAN) / IMAGENET_STD).transpose(2, 0, 1).copy()


def letterbox(rgb8, size, pad=114):
    """YOLOv5's letterbox as `kuiper detect` does it: (image (size, size, 3) uint8,
    scale, pad_left, pad_top)."""
    h, w = rgb8.shape[:2]
    scale = min(size / h, size / w)
    new_w = min(max(int(round(w * scale)), 1), size)
    new_h = min(max(int(round(h * scale)), 1), size)
    top, left = int(round((size - new_h) / 2 - 0.1)), int(round((size - new_w) / 2 - 0.1))
    img = rgb8 if (new_w, new_h) == (w, h) else cv2.resize(rgb8, (new_w, new_h),
                                                           interpolation=cv2.INTER_LINEAR)
    img = cv2.copyMakeBorder(img, top, size - new_h - top, left, size - new_w - left,
                             cv2.BORDER_CONSTANT, value=(pad, pad, pad))
    return img, scale, left, top


def detect_input(rgb8, boxes, size):
    """(3, size, size) float32 in [0, 1] and the boxes in letterboxed pixels."""
    img, scale, left, top = letterbox(rgb8, size)
    boxes = boxes * scale + np.array([left, top, left, top], np.float32)
    return (img.astype(np.float32) / 255).transpose(2, 0, 1).copy(), boxes.astype(np.float32)
