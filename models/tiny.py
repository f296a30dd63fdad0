"""Small graphs for the labs' tests: each runs in microseconds and exercises a
few operator types, so a lab can be checked against PyTorch without ResNet.

| name            | input       | what it covers                                        |
|-----------------|-------------|-------------------------------------------------------|
| tiny_net        | 1x3x16x16   | conv+bn (folded), relu, maxpool, residual add, avgpool, flatten, linear |
| tiny_sigmoid    | 1x4x8x8     | conv, nn.Sigmoid, nn.SiLU                             |
| tiny_expression | 1x2x5x5     | pnnx.Expression add(mul(@0,@1),@2) and a constant     |
| tiny_sin        | 1x2x5x5     | unary expression add(sin(@0),mul(@0,@1)) (course7)    |
| tiny_groupconv  | 1x4x9x9     | grouped and depthwise conv, stride, dilation (course6)|
| tiny_misc       | 1x3x8x8     | unfolded BatchNorm2d, Upsample, cat, view, Softmax    |
| tiny_detect     | 1x3x64x64   | models.yolo.Detect on three levels, 3 classes         |
"""
import torch
from torch import nn

from .seeding import seed_batchnorm, seeded_input
from .yolov5s import Detect


class TinyNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.relu = nn.ReLU()
        self.pool = nn.MaxPool2d(2)
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(8)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(8, 10)

    def forward(self, x):
        x = self.pool(self.relu(self.bn1(self.conv1(x))))
        x = self.relu(self.bn2(self.conv2(x)) + x)  # second relu call: pnnx_unique_0
        return self.fc(torch.flatten(self.avgpool(x), 1))


class TinySigmoid(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(4, 4, 1)
        self.sigmoid = nn.Sigmoid()
        self.silu = nn.SiLU()

    def forward(self, x):
        return self.silu(self.sigmoid(self.conv(x)) * 4 - 2)


class TinyExpression(nn.Module):
    def __init__(self):
        super().__init__()
        self.relu = nn.ReLU()
        self.sigmoid = nn.Sigmoid()

    def forward(self, x):
        a, b = self.relu(x), self.sigmoid(x)
        y = a * b + x                  # add(mul(@0,@1),@2)
        return self.relu(y) / 2.0      # div(@0,2.000000e+00), a second expression


class TinySin(nn.Module):
    def __init__(self):
        super().__init__()
        self.sigmoid = nn.Sigmoid()

    def forward(self, x):
        return torch.sin(x) + x * self.sigmoid(x)  # add(sin(@0),mul(@0,@1))


class TinyGroupConv(nn.Module):
    def __init__(self):
        super().__init__()
        self.group = nn.Conv2d(4, 8, 3, padding=1, groups=2)
        self.depthwise = nn.Conv2d(8, 8, 3, stride=2, padding=2, dilation=2, groups=8)
        self.pointwise = nn.Conv2d(8, 6, 1, bias=False)

    def forward(self, x):
        return self.pointwise(self.depthwise(self.group(x)))


class TinyMisc(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.act = nn.SiLU()
        self.pool = nn.MaxPool2d(3, stride=2, padding=1)
        self.bn = nn.BatchNorm2d(4)      # follows a pool: stays a BatchNorm2d operator
        self.up = nn.Upsample(scale_factor=2, mode="nearest")
        self.fc = nn.Linear(8 * 8 * 8, 10)
        self.softmax = nn.Softmax(dim=1)

    def forward(self, x):
        x = self.act(self.conv(x))
        y = self.up(self.bn(self.pool(x)))
        y = torch.cat((x, y), 1).view(1, -1)
        return self.softmax(self.fc(y))


class TinyDetect(nn.Module):
    def __init__(self):
        super().__init__()
        self.p3 = nn.Conv2d(3, 8, 8, stride=8)
        self.p4 = nn.Conv2d(8, 16, 3, stride=2, padding=1)
        self.p5 = nn.Conv2d(16, 16, 3, stride=2, padding=1)
        self.detect = Detect(nc=3, ch=(8, 16, 16))

    def forward(self, x):
        a = self.p3(x)
        b = self.p4(a)
        return self.detect([a, b, self.p5(b)])


TINY = {  # name -> (class, input shape)
    "tiny_net": (TinyNet, (1, 3, 16, 16)),
    "tiny_sigmoid": (TinySigmoid, (1, 4, 8, 8)),
    "tiny_expression": (TinyExpression, (1, 2, 5, 5)),
    "tiny_sin": (TinySin, (1, 2, 5, 5)),
    "tiny_groupconv": (TinyGroupConv, (1, 4, 9, 9)),
    "tiny_misc": (TinyMisc, (1, 3, 8, 8)),
    "tiny_detect": (TinyDetect, (1, 3, 64, 64)),
}


def build(name, seed=0):
    cls, shape = TINY[name]
    torch.manual_seed(seed)
    model = cls().eval()
    if any(isinstance(m, nn.BatchNorm2d) for m in model.modules()):
        seed_batchnorm(model, seeded_input(shape, seed + 1000), seed)
    if name == "tiny_detect":  # spread the head's logits so objectness varies
        with torch.no_grad():
            for conv in model.detect.m:
                conv.weight.mul_(8.0)
    return model
