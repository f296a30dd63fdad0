"""Seeded, non-trivial weights for models that have no pretrained checkpoint.

Pretrained weights cannot be downloaded here, and default-initialised
BatchNorm (mean 0, var 1, gamma 1, beta 0) would make BN folding a no-op that
tests nothing. Random BN statistics, on the other hand, let activations grow or
vanish over fifty layers. So every BatchNorm2d gets statistics measured on a
seeded calibration input and then perturbed (var scaled by U(0.5, 2), mean
shifted), plus random gamma/beta: non-trivial numbers, yet activations stay O(1).
"""
import torch
from torch import nn


def seed_batchnorm(model, calib_input, seed):
    gen = torch.Generator().manual_seed(seed)

    def uniform(n, lo, hi):
        return lo + (hi - lo) * torch.rand(n, generator=gen)

    def calibrate(bn, args):
        # Runs just before this BN in an eval-mode pass, so it sees the input
        # produced by the already-calibrated layers before it.
        x = args[0].detach()
        n = bn.num_features
        mean = x.mean(dim=(0, 2, 3))
        var = x.var(dim=(0, 2, 3), unbiased=False) + 1e-3
        bn.running_mean.copy_(mean + 0.2 * var.sqrt() * torch.randn(n, generator=gen))
        bn.running_var.copy_(var * uniform(n, 0.5, 2.0))
        bn.weight.data.copy_(uniform(n, 0.5, 1.5))
        bn.bias.data.copy_(uniform(n, -0.2, 0.2))

    bns = [m for m in model.modules() if isinstance(m, nn.BatchNorm2d)]
    hooks = [bn.register_forward_pre_hook(calibrate) for bn in bns]
    try:
        model.eval()
        with torch.no_grad():
            model(calib_input)
    finally:
        for h in hooks:
            h.remove()
    return model


def seeded_input(shape, seed, kind="randn"):
    """The reference input: N(0,1) for normalised images, U(0,1) for raw ones."""
    gen = torch.Generator().manual_seed(seed)
    draw = torch.randn if kind == "randn" else torch.rand
    return draw(*shape, generator=gen)
