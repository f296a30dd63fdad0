// Activations that a layer computing into its own output (a convolution) can
// apply itself, block by block while the values are still in the cache,
// instead of a separate layer reading them back from memory. The graph fuses
// a ReLU or SiLU into the convolution before it (RuntimeGraph::Build).
#pragma once

#include <cstdint>
#include <string>

namespace kuiper {

enum class Activation { kNone, kRelu, kSilu };

// The activation a PNNX operator type computes (nn.ReLU / F.relu, nn.SiLU /
// F.silu), or kNone for any other type.
Activation ActivationOfType(const std::string& type);

// y[i] = x[i] / (1 + e^-x[i]) for n floats, vectorized and within two ulps
// of the exact value (kuiper/src/layer/activation.cpp says how). x and y may
// be equal.
void SiluSpan(const float* x, float* y, int64_t n);

// x[i] = activation(x[i] + bias) for n floats, in place.
void AddBiasAndActivate(float* x, int64_t n, float bias, Activation activation);

}  // namespace kuiper
