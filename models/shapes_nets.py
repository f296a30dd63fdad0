"""The two networks trained on models/shapes.py's images (tools/train_shapes.py).

    shapes_resnet18   torchvision's ResNet18, 5 classes, 32x32 input (CLASSIFY_INPUT)
    shapes_yolov5     models/yolov5s.py's YOLOv5 at half YOLOv5n's width (width 0.125,
                      depth 0.33: channels 8..128), 5 classes, 96x96 input
                      (DETECT_INPUT), the same Detect head and anchor logic as
                      YOLOv5s, with anchors sized for the shapes (ANCHORS)

Input sizes are small so that both train in 4 minutes on two CPU cores; the
CLI reads the size from the exported graph, so nothing else needs to know it.
"""
import math

import torch
import torchvision

from . import shapes
from .yolov5s import STRIDES, YOLOv5

CLASSIFIER, DETECTOR = "shapes_resnet18", "shapes_yolov5"
CLASSIFY_INPUT, DETECT_INPUT = 32, 96
NC = len(shapes.CLASSES)
# YOLOv5n is (0.25, 0.33); half its width costs about half as much to train.
WIDTH, DEPTH = 0.125, 0.33
# Anchors (w, h in input pixels) for these shapes, whose boxes are about square
# and 10..60 px a side at DETECT_INPUT: three sizes per level, in a geometric
# series, where COCO's (yolov5s.ANCHORS, up to 373 px) would leave P5's unused.
ANCHORS = ((8, 8, 11, 11, 15, 15), (20, 20, 26, 26, 34, 34), (44, 44, 56, 56, 72, 72))


def build_classifier(seed=0):
    torch.manual_seed(seed)
    return torchvision.models.resnet18(weights=None, num_classes=NC)


def build_detector(seed=0):
    torch.manual_seed(seed)
    model = YOLOv5(nc=NC, width=WIDTH, depth=DEPTH, anchors=ANCHORS)
    # YOLOv5's bias priors (as in yolov5s._seed_detect, for this input size): about
    # 8 objects per image spread over the cells of a level, classes equally likely.
    detect = model.model[24]
    with torch.no_grad():
        for conv, stride in zip(detect.m, STRIDES):
            b = conv.bias.view(detect.na, detect.no)
            b[:, 4] = math.log(8 / (DETECT_INPUT / stride) ** 2)
            b[:, 5:] = math.log(0.6 / (NC - 0.99))
    return model


def load(name, path):
    """A trained model, in eval mode, from its state_dict file."""
    model = build_classifier() if name == CLASSIFIER else build_detector()
    model.load_state_dict(torch.load(path, map_location="cpu"))
    return model.eval()
