"""Model recipes for the exporter: name -> how to build it and what to feed it.

Every model is built with seeded weights (pretrained ones cannot be downloaded)
and fed a seeded input; tools/make_models.py turns each into PNNX files plus
PyTorch's reference output.
"""
from dataclasses import dataclass
from typing import Callable, Tuple

from . import resnet18, tiny, yolov5s


@dataclass(frozen=True)
class ModelSpec:
    name: str
    build: Callable          # build(checkpoint=None) -> nn.Module in eval mode
    input_shape: Tuple[int, ...]
    input_kind: str = "randn"           # "rand" = pixels in [0, 1]
    extra_batches: Tuple[int, ...] = ()  # more reference pairs, e.g. batch 4
    class_file: str = ""                 # label names written next to the model
    class_names: Callable = None
    small: bool = False                  # fixtures keep .bin and .npy, not just .param
    accepts_checkpoint: bool = False


def _tiny(name):
    def build(checkpoint=None):
        if checkpoint:
            raise ValueError("%s has no checkpoint format" % name)
        return tiny.build(name)
    return ModelSpec(name, build, tiny.TINY[name][1], small=True)


MODELS = {
    "resnet18": ModelSpec(
        "resnet18", lambda checkpoint=None: resnet18.build(checkpoint=checkpoint),
        resnet18.INPUT_SHAPE, extra_batches=(4,), class_file="imagenet_classes.txt",
        class_names=resnet18.class_names, accepts_checkpoint=True),
    "yolov5s": ModelSpec(
        "yolov5s", lambda checkpoint=None: yolov5s.build(checkpoint=checkpoint),
        yolov5s.INPUT_SHAPE, input_kind="rand", class_file="coco_classes.txt",
        class_names=yolov5s.class_names, accepts_checkpoint=True),
}
MODELS.update({name: _tiny(name) for name in tiny.TINY})
