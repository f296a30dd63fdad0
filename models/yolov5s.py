"""YOLOv5s (v6 architecture) in plain PyTorch, with seeded weights.

Written from the public architecture description (yolov5s.yaml, v6.0: depth
0.33, width 0.50), so module names match an Ultralytics state_dict:
`model.0.conv.weight`, `model.0.bn.running_var`, `model.2.m.0.cv1.conv.weight`,
..., `model.24.m.0.weight`, `model.24.anchors`.

Checkpoint (`build(checkpoint=...)`): a plain state_dict of an 80-class v6
yolov5s, made inside the Ultralytics repo with
    ckpt = torch.load("yolov5s.pt"); torch.save(ckpt["model"].float().state_dict(), "yolov5s_sd.pt")
Its keys are every parameter, every BatchNorm's running_mean, running_var and
num_batches_tracked, and `model.24.anchors` in grid units (pixels / stride),
which we convert to pixels. Ultralytics keeps the strides as a plain attribute,
so there is no strides key. `model.24.anchor_grid` (v5.0 files) is ignored.
"""
import math

import torch
from torch import nn

from .seeding import seed_batchnorm, seeded_input

INPUT_SHAPE = (1, 3, 640, 640)
ANCHORS = ((10, 13, 16, 30, 33, 23), (30, 61, 62, 45, 59, 119), (116, 90, 156, 198, 373, 326))
STRIDES = (8, 16, 32)

COCO_CLASSES = (
    "person", "bicycle", "car", "motorcycle", "airplane", "bus", "train", "truck", "boat",
    "traffic light", "fire hydrant", "stop sign", "parking meter", "bench", "bird", "cat", "dog",
    "horse", "sheep", "cow", "elephant", "bear", "zebra", "giraffe", "backpack", "umbrella",
    "handbag", "tie", "suitcase", "frisbee", "skis", "snowboard", "sports ball", "kite",
    "baseball bat", "baseball glove", "skateboard", "surfboard", "tennis racket", "bottle",
    "wine glass", "cup", "fork", "knife", "spoon", "bowl", "banana", "apple", "sandwich", "orange",
    "broccoli", "carrot", "hot dog", "pizza", "donut", "cake", "chair", "couch", "potted plant",
    "bed", "dining table", "toilet", "tv", "laptop", "mouse", "remote", "keyboard", "cell phone",
    "microwave", "oven", "toaster", "sink", "refrigerator", "book", "clock", "vase", "scissors",
    "teddy bear", "hair drier", "toothbrush")


class Conv(nn.Module):
    """Conv2d (no bias, 'same' padding) + BatchNorm + SiLU."""

    def __init__(self, c1, c2, k=1, s=1, p=None):
        super().__init__()
        self.conv = nn.Conv2d(c1, c2, k, s, k // 2 if p is None else p, bias=False)
        self.bn = nn.BatchNorm2d(c2, eps=1e-3)  # YOLOv5 trains with eps 1e-3
        self.act = nn.SiLU()

    def forward(self, x):
        return self.act(self.bn(self.conv(x)))


class Bottleneck(nn.Module):
    def __init__(self, c1, c2, shortcut=True):
        super().__init__()
        self.cv1 = Conv(c1, c2, 1)
        self.cv2 = Conv(c2, c2, 3)
        self.add = shortcut and c1 == c2

    def forward(self, x):
        y = self.cv2(self.cv1(x))
        return x + y if self.add else y


class C3(nn.Module):
    """CSP block: half the channels go through n bottlenecks, half skip them."""

    def __init__(self, c1, c2, n=1, shortcut=True):
        super().__init__()
        c_ = c2 // 2
        self.cv1 = Conv(c1, c_, 1)
        self.cv2 = Conv(c1, c_, 1)
        self.cv3 = Conv(2 * c_, c2, 1)
        self.m = nn.Sequential(*(Bottleneck(c_, c_, shortcut) for _ in range(n)))

    def forward(self, x):
        return self.cv3(torch.cat((self.m(self.cv1(x)), self.cv2(x)), 1))


class SPPF(nn.Module):
    """Three chained 5x5 max pools = pools of size 5, 9, 13, at a third of the cost."""

    def __init__(self, c1, c2, k=5):
        super().__init__()
        c_ = c1 // 2
        self.cv1 = Conv(c1, c_, 1)
        self.cv2 = Conv(c_ * 4, c2, 1)
        self.m = nn.MaxPool2d(kernel_size=k, stride=1, padding=k // 2)

    def forward(self, x):
        x = self.cv1(x)
        y1 = self.m(x)
        y2 = self.m(y1)
        return self.cv2(torch.cat((x, y1, y2, self.m(y2)), 1))


class Concat(nn.Module):
    def __init__(self, dim=1):
        super().__init__()
        self.d = dim

    def forward(self, xs):
        return torch.cat(xs, self.d)


class Detect(nn.Module):
    """YOLOv5 v6 detection head, exported as ONE PNNX operator `models.yolo.Detect`.

    Inputs: feature maps x_i (bs, c_i, ny_i, nx_i) at strides 8, 16, 32.
    Output: (bs, N, no) with no = nc + 5 and N = sum_i na*ny_i*nx_i
    (25200 for a 640x640 image), rows ordered level, anchor, y, x.

    For each level i:
      p = conv_i(x_i)                             1x1 conv, bias, na*no channels
      p = p.view(bs, na, no, ny, nx).permute(0, 1, 3, 4, 2)   -> (bs, na, ny, nx, no)
      y = sigmoid(p)
      xy = (y[..., 0:2] * 2 - 0.5 + grid) * stride_i     grid[y, x] = (x, y) cell index
      wh = (y[..., 2:4] * 2) ** 2 * anchor_i[a]          anchor in pixels, per anchor a
      out_i = cat(xy, wh, y[..., 4:]).view(bs, -1, no)   box centre/size in input pixels,
                                                         objectness, nc class scores
    output = cat(out_0, out_1, out_2, dim=1)

    PNNX params nc, na; attributes m.{i}.weight (na*no, c_i, 1, 1), m.{i}.bias (na*no),
    anchors (nl, na, 2) in pixels, strides (nl).
    """
    pnnx_type = "models.yolo.Detect"

    def __init__(self, nc=80, anchors=ANCHORS, ch=(128, 256, 512), strides=STRIDES):
        super().__init__()
        self.nc, self.no = nc, nc + 5
        self.nl, self.na = len(anchors), len(anchors[0]) // 2
        self.m = nn.ModuleList(nn.Conv2d(c, self.no * self.na, 1) for c in ch)
        self.register_buffer("anchors", torch.tensor(anchors, dtype=torch.float32).view(self.nl, self.na, 2))
        # Not persistent: an Ultralytics state_dict has no strides key (see the module docstring).
        self.register_buffer("strides", torch.tensor(strides, dtype=torch.float32), persistent=False)

    def forward(self, xs):
        out = []
        for i, x in enumerate(xs):
            bs, _, ny, nx = x.shape
            y = self.m[i](x).view(bs, self.na, self.no, ny, nx).permute(0, 1, 3, 4, 2).sigmoid()
            gy, gx = torch.meshgrid(torch.arange(ny), torch.arange(nx), indexing="ij")
            grid = torch.stack((gx, gy), -1).view(1, 1, ny, nx, 2).float()
            xy = (y[..., 0:2] * 2 - 0.5 + grid) * self.strides[i]
            wh = (y[..., 2:4] * 2) ** 2 * self.anchors[i].view(1, self.na, 1, 1, 2)
            out.append(torch.cat((xy, wh, y[..., 4:]), -1).view(bs, -1, self.no))
        return torch.cat(out, 1)

    def pnnx_export(self):
        attrs = {"anchors": self.anchors, "strides": self.strides}
        for i, conv in enumerate(self.m):
            attrs["m.%d.weight" % i] = conv.weight
            attrs["m.%d.bias" % i] = conv.bias
        return {"nc": self.nc, "na": self.na}, attrs


def _channels(c, width):
    """yolov5*.yaml's width rule: channels x width, rounded up to a multiple of 8."""
    return int(math.ceil(c * width / 8) * 8)


def _repeats(n, depth):
    """yolov5*.yaml's depth rule: a C3's bottleneck count x depth, at least 1."""
    return max(round(n * depth), 1)


class YOLOv5(nn.Module):
    """YOLOv5 v6 at any width/depth multiple: (0.50, 0.33) is YOLOv5s,
    (0.25, 0.33) YOLOv5n. The layer list is yolov5s.yaml's; the index is the
    layer number used in the yaml and in state_dict keys."""

    def __init__(self, nc=80, width=0.50, depth=0.33, anchors=ANCHORS):
        super().__init__()
        c = lambda n: _channels(n, width)  # noqa: E731
        d = lambda n: _repeats(n, depth)   # noqa: E731
        self.model = nn.ModuleList([
            Conv(3, c(64), 6, 2, 2),             # 0  P1/2
            Conv(c(64), c(128), 3, 2),           # 1  P2/4
            C3(c(128), c(128), d(3)),            # 2
            Conv(c(128), c(256), 3, 2),          # 3  P3/8
            C3(c(256), c(256), d(6)),            # 4
            Conv(c(256), c(512), 3, 2),          # 5  P4/16
            C3(c(512), c(512), d(9)),            # 6
            Conv(c(512), c(1024), 3, 2),         # 7  P5/32
            C3(c(1024), c(1024), d(3)),          # 8
            SPPF(c(1024), c(1024), 5),           # 9
            Conv(c(1024), c(512), 1, 1),         # 10
            nn.Upsample(None, 2, "nearest"),     # 11
            Concat(1),                           # 12 cat backbone P4
            C3(c(1024), c(512), d(3), False),    # 13
            Conv(c(512), c(256), 1, 1),          # 14
            nn.Upsample(None, 2, "nearest"),     # 15
            Concat(1),                           # 16 cat backbone P3
            C3(c(512), c(256), d(3), False),     # 17 P3/8 out
            Conv(c(256), c(256), 3, 2),          # 18
            Concat(1),                           # 19 cat head P4
            C3(c(512), c(512), d(3), False),     # 20 P4/16 out
            Conv(c(512), c(512), 3, 2),          # 21
            Concat(1),                           # 22 cat head P5
            C3(c(1024), c(1024), d(3), False),   # 23 P5/32 out
            Detect(nc, anchors, (c(256), c(512), c(1024))),  # 24
        ])

    def features(self, x):
        """The three maps Detect reads (strides 8, 16, 32); training reads them too."""
        m = self.model
        x = m[1](m[0](x))
        p3 = m[4](m[3](m[2](x)))
        p4 = m[6](m[5](p3))
        x = m[9](m[8](m[7](p4)))
        h10 = m[10](x)
        x = m[13](m[12]([m[11](h10), p4]))
        h14 = m[14](x)
        out17 = m[17](m[16]([m[15](h14), p3]))
        out20 = m[20](m[19]([m[18](out17), h14]))
        out23 = m[23](m[22]([m[21](out20), h10]))
        return [out17, out20, out23]

    def forward(self, x):
        return self.model[24](self.features(x))


class YOLOv5s(YOLOv5):
    def __init__(self, nc=80):
        super().__init__(nc, width=0.50, depth=0.33)


def _seed_detect(detect, feats, gen):
    """Head weights giving logits of std ~2 before the bias, and YOLOv5's own
    bias initialisation (objectness prior of ~8 objects per 640 image, class
    prior 0.6/nc): a noise image then yields a few confident boxes, not none
    and not all."""
    for i, (conv, f) in enumerate(zip(detect.m, feats)):
        w = torch.randn(conv.weight.shape, generator=gen)
        logits = nn.functional.conv2d(f, w)
        conv.weight.data.copy_(w * (2.0 / logits.std()))
        b = torch.zeros(detect.na, detect.no)
        b[:, 4] = math.log(8 / (640 / STRIDES[i]) ** 2)
        b[:, 5:] = math.log(0.6 / (detect.nc - 0.99))
        conv.bias.data.copy_(b.view(-1))


def _load_checkpoint(model, path):
    sd = torch.load(path, map_location="cpu")
    sd.pop("model.24.anchor_grid", None)
    strides = model.model[24].strides.view(-1, 1, 1)
    if "model.24.anchors" in sd:
        sd["model.24.anchors"] = sd["model.24.anchors"].float() * strides  # grid units -> pixels
    model.load_state_dict(sd)


def build(seed=0, checkpoint=None):
    torch.manual_seed(seed)
    model = YOLOv5s().eval()
    if checkpoint:
        _load_checkpoint(model, checkpoint)
        return model
    calib = seeded_input(INPUT_SHAPE, seed + 1000, "rand")
    seed_batchnorm(model, calib, seed)
    feats = []
    hook = model.model[24].register_forward_pre_hook(lambda mod, args: feats.extend(args[0]))
    with torch.no_grad():
        model(calib)
    hook.remove()
    with torch.no_grad():
        _seed_detect(model.model[24], feats, torch.Generator().manual_seed(seed + 2000))
    return model


def class_names():
    return list(COCO_CLASSES)
