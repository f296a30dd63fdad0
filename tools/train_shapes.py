#!/usr/bin/python3
"""Train the shape classifier and the shape detector, and export both to PNNX.

    /usr/bin/python3 tools/train_shapes.py [--out build/models] [--only classifier|detector]
                                           [--force] [--threads 2]

Models made here, from images models/shapes.py draws (nothing is downloaded):
  <out>/shapes_resnet18/   ResNet18 (torchvision), 32x32, circle/square/triangle/star/cross
  <out>/shapes_yolov5/     YOLOv5 (models/yolov5s.py) at width 0.125, depth 0.33, 96x96,
                           anchors for the shapes' sizes (models/shapes_nets.py)
each with:
  NAME.pt                        the trained state_dict
  NAME.pnnx.param, NAME.pnnx.bin the exported graph (BatchNorm folded), as tools/make_models.py
  NAME.input.npy, NAME.output.npy  a fixed batch of generated images (the "samples" split)
                                 and PyTorch's output on it, for the end-to-end tests
  samples/*.png                  those images, as the CLI reads them (the file name
                                 says the classifier's expected class)
  classes.txt                    the class names, one a line (the CLI prints them)
  about.txt                      one line on how it was trained and what it scores

Trained once: a model whose files all exist is skipped (--force retrains).
Seeds are fixed. With --threads 2 (the default) the two models train at once,
each in its own process on one thread; results may differ in the last bits with
another thread count or CPU. The score in about.txt is PyTorch's on
the held-out "test" split; tools/eval_shapes.py measures it again through the engine.
"""
import argparse
import copy
import math
import os
import resource
import subprocess
import sys
import time

import cv2
import numpy as np
import torch
import torchvision
from torch import nn

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "tools"))

from models import shapes  # noqa: E402
from models import shapes_nets as nets  # noqa: E402
from pnnx_export import export  # noqa: E402
import shapes_metrics as metrics  # noqa: E402

# How much training: `images` drawn once, seen `epochs` times in batches of `batch`.
# Measured 2026-12-05 on the shared 2-core machine (load 6-12, so wall times are
# longer than an idle machine's; CPU time is what to compare), each model in its own
# single-threaded process, drawing, scoring and export included:
#   classifier  255 s CPU (988 s wall), held-out top-1 0.962
#   detector    167 s CPU (211 s wall, load ~6), held-out mAP@0.5 0.909
#   both        ~425 s CPU with the parent process; the budget is 480 s CPU, 4
#               minutes of wall time on two idle cores (scripts/test.sh trains
#               while it compiles).
# final_project/README.md, "The trained models", says why these numbers.
CLASSIFY = dict(images=8000, epochs=4, batch=64, lr=3e-3, ema=0.99)
DETECT = dict(images=4000, epochs=12, batch=32, lr=5e-3, ema=0.99)
# Held-out images scored after training (the first of the "test" split).
TEST_CLASSIFY, TEST_DETECT = 500, 200
SAMPLES_PER_CLASS, DETECT_SAMPLES = 2, 4


class Progress:
    """One line on stderr, rewritten with '\\r' on a terminal, every 10% otherwise."""

    def __init__(self, title, total):
        self.title, self.total, self.t0 = title, total, time.time()
        self.tty = sys.stderr.isatty()
        self.last_tenth = -1

    def update(self, done, note=""):
        elapsed = time.time() - self.t0
        eta = elapsed / done * (self.total - done) if done else 0
        bar = "#" * (20 * done // self.total) + "." * (20 - 20 * done // self.total)
        line = "%s [%s] %d/%d %s %4.0fs elapsed, ~%.0fs left" % (
            self.title, bar, done, self.total, note, elapsed, eta)
        tenth = 10 * done // self.total
        if self.tty:
            sys.stderr.write("\r\033[K" + line)
        elif tenth != self.last_tenth:
            sys.stderr.write(line + "\n")
        self.last_tenth = tenth
        if done == self.total and self.tty:
            sys.stderr.write("\n")
        sys.stderr.flush()


class Ema:
    """Exponential moving average of the weights (and BatchNorm statistics), as
    YOLOv5 keeps: it smooths the last, noisy steps of a short training."""

    def __init__(self, model, decay=0.99, warmup=50):
        self.model = copy.deepcopy(model).eval()
        self.decay, self.warmup, self.updates = decay, warmup, 0
        for p in self.model.parameters():
            p.requires_grad_(False)

    @torch.no_grad()
    def update(self, model):
        self.updates += 1
        d = self.decay * (1 - math.exp(-self.updates / self.warmup))
        live = model.state_dict()
        for k, v in self.model.state_dict().items():
            if v.dtype.is_floating_point:
                v.mul_(d).add_(live[k].detach(), alpha=1 - d)
            else:
                v.copy_(live[k])


# ----------------------------------------------------------------------------
# Data: each split is drawn once into arrays (every image from its own seed, the
# split's first seed + its index) and training runs for epochs over them, in an
# order shuffled by a fixed seed, each image flipped at random (a flipped
# shape is still the same shape; boxes flip with it).

def classify_batch(split, start, n):
    xs, ys = [], []
    for i in range(start, start + n):
        img, cls = shapes.classification_image(shapes.SPLITS[split] + i)
        xs.append(shapes.classify_input(img, nets.CLASSIFY_INPUT))
        ys.append(cls)
    return np.stack(xs), np.array(ys, np.int64)


def detect_batch(split, start, n):
    """Inputs (n, 3, S, S), and targets (k, 6): image in batch, class, x1 y1 x2 y2."""
    xs, targets = [], []
    for j, i in enumerate(range(start, start + n)):
        img, boxes, classes = shapes.detection_image(shapes.SPLITS[split] + i)
        x, boxes = shapes.detect_input(img, boxes, nets.DETECT_INPUT)
        xs.append(x)
        for b, c in zip(boxes, classes):
            targets.append([j, c, *b])
    return np.stack(xs), np.array(targets, np.float32).reshape(-1, 6)


def epochs(cfg, n, seed):
    """The image indices of each step: cfg["epochs"] shuffled passes over n images."""
    g = torch.Generator().manual_seed(seed)
    order = torch.cat([torch.randperm(n, generator=g) for _ in range(cfg["epochs"])])
    steps = len(order) // cfg["batch"]
    return [order[i * cfg["batch"]:(i + 1) * cfg["batch"]] for i in range(steps)], g


def flip(x, g):
    """Each image flipped left-right and/or up-down at random: (images, fx, fy)."""
    n = len(x)
    fx, fy = torch.rand(n, generator=g) < 0.5, torch.rand(n, generator=g) < 0.5
    x = x.clone()
    x[fx] = x[fx].flip(3)
    x[fy] = x[fy].flip(2)
    return x, fx, fy


# ----------------------------------------------------------------------------
# YOLOv5's loss, written from its description: each ground-truth box is
# assigned to every anchor whose shape is within 4x of it (either way), at the
# cell holding its centre and the two neighbouring cells nearest to the centre
# (the head's xy = 2 sigmoid - 0.5 reaches them); boxes are scored by CIoU,
# objectness is BCE towards the CIoU of the assigned prediction (0 elsewhere),
# classes are BCE towards one-hot.

BALANCE = (4.0, 1.0, 0.4)  # objectness weight per level (P3 has the most cells)


def yolo_loss(detect, feats, targets):
    device_zero = feats[0].new_zeros(())
    lbox, lobj, lcls = device_zero, device_zero, device_zero
    t = torch.from_numpy(targets)
    img_i, cls = t[:, 0].long(), t[:, 1].long()
    gxy = (t[:, 2:4] + t[:, 4:6]) / 2
    gwh = t[:, 4:6] - t[:, 2:4]
    for level, (conv, x) in enumerate(zip(detect.m, feats)):
        bs, _, ny, nx = x.shape
        p = conv(x).view(bs, detect.na, detect.no, ny, nx).permute(0, 1, 3, 4, 2)
        tobj = torch.zeros(p.shape[:4])
        stride = float(detect.strides[level])
        anchors = detect.anchors[level]  # (na, 2) in pixels
        if len(t):
            ratio = gwh[None] / anchors[:, None]                      # (na, n, 2)
            ok = torch.max(ratio, 1 / ratio).max(2).values < 4.0
            a, k = ok.nonzero(as_tuple=True)
            g = gxy[k] / stride
            cell = g.floor()
            frac = g - cell
            # The centre cell, plus the horizontal and the vertical neighbour nearest the centre.
            offsets = [torch.zeros_like(g)]
            step_x = torch.where(frac[:, 0] < 0.5, -1.0, 1.0)
            step_y = torch.where(frac[:, 1] < 0.5, -1.0, 1.0)
            offsets.append(torch.stack([step_x, torch.zeros_like(step_x)], 1))
            offsets.append(torch.stack([torch.zeros_like(step_y), step_y], 1))
            a = a.repeat(3)
            k = k.repeat(3)
            g = g.repeat(3, 1)
            cell = cell.repeat(3, 1) + torch.cat(offsets)
            inside = (cell[:, 0] >= 0) & (cell[:, 0] < nx) & (cell[:, 1] >= 0) & (cell[:, 1] < ny)
            a, k, g, cell = a[inside], k[inside], g[inside], cell[inside]
            cx, cy = cell[:, 0].long(), cell[:, 1].long()
            b = img_i[k]
            ps = p[b, a, cy, cx]
            pxy = ps[:, :2].sigmoid() * 2 - 0.5 + cell
            pwh = (ps[:, 2:4].sigmoid() * 2) ** 2 * anchors[a] / stride
            pbox = torch.cat([pxy - pwh / 2, pxy + pwh / 2], 1)
            twh = gwh[k] / stride
            tbox = torch.cat([g - twh / 2, g + twh / 2], 1)
            box_loss = torchvision.ops.complete_box_iou_loss(pbox, tbox, reduction="none")
            lbox = lbox + box_loss.mean()
            tobj[b, a, cy, cx] = (1 - box_loss).detach().clamp(0)
            onehot = torch.zeros(len(ps), detect.nc)
            onehot[torch.arange(len(ps)), cls[k]] = 1
            lcls = lcls + nn.functional.binary_cross_entropy_with_logits(ps[:, 5:], onehot)
        lobj = lobj + BALANCE[level] * nn.functional.binary_cross_entropy_with_logits(p[..., 4], tobj)
    # YOLOv5's gains (box 0.05, objectness 1.0, classes 0.5), scaled as it scales
    # them for the number of classes and the image size.
    s = nets.DETECT_INPUT / 640
    return 0.05 * lbox + 1.0 * s * s * lobj + 0.5 * detect.nc / 80 * lcls


# ----------------------------------------------------------------------------

def optimiser(model, cfg, steps):
    opt = torch.optim.AdamW(model.parameters(), lr=cfg["lr"], weight_decay=5e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=cfg["lr"], total_steps=steps,
                                                pct_start=0.15)
    return opt, sched


def train_classifier(cfg):
    x_all, y_all = classify_batch("train", 0, cfg["images"])
    x_all, y_all = torch.from_numpy(x_all), torch.from_numpy(y_all)
    model = nets.build_classifier()
    model.train()
    batches, g = epochs(cfg, len(x_all), seed=1)
    opt, sched = optimiser(model, cfg, len(batches))
    ema = Ema(model, cfg["ema"])
    progress = Progress("shapes_resnet18: training", len(batches))
    for step, idx in enumerate(batches):
        x, _, _ = flip(x_all[idx], g)
        y = y_all[idx]
        logits = model(x)
        loss = nn.functional.cross_entropy(logits, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        ema.update(model)
        acc = float((logits.argmax(1) == y).float().mean())
        progress.update(step + 1, "loss %.3f acc %.2f" % (loss.item(), acc))
    return ema.model


def train_detector(cfg):
    x_all, t_all = detect_batch("train", 0, cfg["images"])
    x_all = torch.from_numpy(x_all)
    # The targets of image i are rows starts[i]:starts[i + 1] (detect_batch writes them in order).
    starts = np.searchsorted(t_all[:, 0], np.arange(len(x_all) + 1))
    size = float(nets.DETECT_INPUT)
    model = nets.build_detector()
    model.train()
    detect = model.model[24]
    batches, g = epochs(cfg, len(x_all), seed=2)
    opt, sched = optimiser(model, cfg, len(batches))
    ema = Ema(model, cfg["ema"])
    progress = Progress("shapes_yolov5:  training", len(batches))
    for step, idx in enumerate(batches):
        x, fx, fy = flip(x_all[idx], g)
        rows = []
        for j, i in enumerate(idx.tolist()):
            t = t_all[starts[i]:starts[i + 1]].copy()
            t[:, 0] = j
            if fx[j]:
                t[:, [2, 4]] = size - t[:, [4, 2]]
            if fy[j]:
                t[:, [3, 5]] = size - t[:, [5, 3]]
            rows.append(t)
        targets = np.concatenate(rows) if rows else np.zeros((0, 6), np.float32)
        loss = yolo_loss(detect, model.features(x), targets)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        ema.update(model)
        progress.update(step + 1, "loss %.4f" % loss.item())
    return ema.model


# ----------------------------------------------------------------------------
# Held-out scores (PyTorch) and the reference files.

def run_batched(model, x, batch=50):
    with torch.no_grad():
        return np.concatenate([model(torch.from_numpy(x[i:i + batch])).numpy()
                               for i in range(0, len(x), batch)])


def test_set(name):
    if name == nets.CLASSIFIER:
        return classify_batch("test", 0, TEST_CLASSIFY)
    xs, gt_boxes, gt_classes = [], [], []
    for i in range(TEST_DETECT):
        img, boxes, classes = shapes.detection_image(shapes.SPLITS["test"] + i)
        x, boxes = shapes.detect_input(img, boxes, nets.DETECT_INPUT)
        xs.append(x)
        gt_boxes.append(boxes)
        gt_classes.append(classes)
    return np.stack(xs), (gt_boxes, gt_classes)


def score(name, outputs, truth):
    """(metric name, value) for a model's outputs on the held-out set."""
    if name == nets.CLASSIFIER:
        return "top-1", metrics.top1(outputs, truth)
    return "mAP@0.5", metrics.map50(metrics.detections(outputs), truth[0], truth[1], nets.NC)


def write_samples(name, model, folder):
    """The fixed sample images (PNG, as the CLI reads them), their inputs and PyTorch's outputs."""
    sample_dir = os.path.join(folder, "samples")
    os.makedirs(sample_dir, exist_ok=True)
    xs = []
    if name == nets.CLASSIFIER:
        count = [0] * nets.NC
        i = 0
        while min(count) < SAMPLES_PER_CLASS:
            img, cls = shapes.classification_image(shapes.SPLITS["samples"] + i)
            i += 1
            if count[cls] == SAMPLES_PER_CLASS:
                continue
            count[cls] += 1
            path = os.path.join(sample_dir, "%02d_%s.png" % (len(xs), shapes.CLASSES[cls]))
            cv2.imwrite(path, cv2.cvtColor(img, cv2.COLOR_RGB2BGR))
            xs.append(shapes.classify_input(img, nets.CLASSIFY_INPUT))
    else:
        for i in range(DETECT_SAMPLES):
            img, boxes, _ = shapes.detection_image(shapes.SPLITS["samples"] + i)
            cv2.imwrite(os.path.join(sample_dir, "%02d.png" % i), cv2.cvtColor(img, cv2.COLOR_RGB2BGR))
            xs.append(shapes.detect_input(img, boxes, nets.DETECT_INPUT)[0])
    x = np.stack(xs).astype(np.float32)
    np.save(os.path.join(folder, name + ".input.npy"), x)
    np.save(os.path.join(folder, name + ".output.npy"), run_batched(model, x).astype(np.float32))


def make(name, out, force):
    folder = os.path.join(out, name)
    files = [os.path.join(folder, f) for f in (
        name + ".pt", name + ".pnnx.param", name + ".pnnx.bin", name + ".input.npy",
        name + ".output.npy", "classes.txt", "about.txt")]
    if not force and all(os.path.exists(f) for f in files):
        print("%-16s up to date (use --force to retrain)" % name)
        return
    os.makedirs(folder, exist_ok=True)
    cfg = CLASSIFY if name == nets.CLASSIFIER else DETECT
    t0, c0 = time.time(), time.process_time()
    model = (train_classifier if name == nets.CLASSIFIER else train_detector)(cfg)
    wall, cpu = time.time() - t0, time.process_time() - c0
    model.eval()
    torch.save(model.state_dict(), os.path.join(folder, name + ".pt"))

    x, truth = test_set(name)
    metric, value = score(name, run_batched(model, x), truth)
    size = nets.CLASSIFY_INPUT if name == nets.CLASSIFIER else nets.DETECT_INPUT
    export(model, [torch.from_numpy(x[:1])], os.path.join(folder, name + ".pnnx.param"),
           os.path.join(folder, name + ".pnnx.bin"))
    write_samples(name, model, folder)
    with open(os.path.join(folder, "classes.txt"), "w") as f:
        f.write("\n".join(shapes.CLASSES) + "\n")
    about = ("trained by tools/train_shapes.py on %d generated %dx%d images (%d epochs in "
             "batches of %d, %.0f s wall, %.0f s CPU); held-out %s %.3f (PyTorch, %d images)" % (
                 cfg["images"], size, size, cfg["epochs"], cfg["batch"], wall, cpu,
                 metric, value, len(x)))
    with open(os.path.join(folder, "about.txt"), "w") as f:
        f.write(about + "\n")
    print("%s: %s\n  training: %.0f s wall, %.0f s CPU on %d thread(s)" % (
        name, about, wall, cpu, torch.get_num_threads()))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "models"))
    ap.add_argument("--only", choices=("classifier", "detector"))
    ap.add_argument("--force", action="store_true", help="retrain models that exist")
    ap.add_argument("--threads", type=int, default=2,
                    help="cores to use: with 2 or more, the two models train at once, "
                         "each in its own process on threads // 2 threads")
    ap.add_argument("--epochs", type=int, nargs=2, metavar=("CLASSIFIER", "DETECTOR"),
                    help="epochs instead of %d and %d (for experiments)" % (
                        CLASSIFY["epochs"], DETECT["epochs"]))
    args = ap.parse_args(argv)
    t0 = time.time()
    if args.only is None and args.threads >= 2:
        # One process per model, each single-threaded at 2 cores: small convolutions
        # scale badly over threads (at 2 threads a step cost 3-20x the CPU time of
        # one thread on the shared machine), and two processes never wait for each other.
        common = ["--out", args.out, "--threads", str(args.threads // 2)]
        common += ["--force"] if args.force else []
        common += ["--epochs", *map(str, args.epochs)] if args.epochs else []
        procs = [subprocess.Popen([sys.executable, os.path.abspath(__file__), "--only", only]
                                  + common) for only in ("classifier", "detector")]
        status = max(p.wait() for p in procs)
        cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
        print("done in %.0f s wall, %.0f s CPU (both processes and this one)" % (
            time.time() - t0, cpu.ru_utime + cpu.ru_stime + time.process_time()))
        return status
    if args.epochs:
        CLASSIFY["epochs"], DETECT["epochs"] = args.epochs
    torch.set_num_threads(args.threads)
    names = {"classifier": [nets.CLASSIFIER], "detector": [nets.DETECTOR]}.get(
        args.only, [nets.CLASSIFIER, nets.DETECTOR])
    for name in names:
        make(name, args.out, args.force)
    print("done in %.0f s wall, %.0f s CPU" % (time.time() - t0, time.process_time()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
