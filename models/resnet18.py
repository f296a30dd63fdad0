"""ResNet18 (torchvision), with seeded weights unless a checkpoint is given.

Checkpoint: a torchvision state_dict, e.g.
    torch.save(torchvision.models.resnet18(weights="IMAGENET1K_V1").state_dict(), "r18.pth")
keys `conv1.weight`, `bn1.running_mean`, `layer1.0.conv1.weight`, ..., `fc.bias`.
"""
import torch
import torchvision

from .seeding import seed_batchnorm, seeded_input

INPUT_SHAPE = (1, 3, 224, 224)


def build(seed=0, checkpoint=None):
    torch.manual_seed(seed)
    model = torchvision.models.resnet18(weights=None)
    if checkpoint:
        model.load_state_dict(torch.load(checkpoint, map_location="cpu"))
    else:
        seed_batchnorm(model, seeded_input(INPUT_SHAPE, seed + 1000), seed)
    return model.eval()


def class_names():
    # The category list ships inside torchvision; no download needed.
    return torchvision.models.ResNet18_Weights.IMAGENET1K_V1.meta["categories"]
