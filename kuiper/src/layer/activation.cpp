// The activations a layer applies to its own output (activation.hpp), and
// SiLU's arithmetic. SiLU (swish), y = x * sigmoid(x) = x / (1 + e^-x), is the
// activation of every YOLOv5 conv block: 23.7 million values per YOLOv5s image.
//
// A call to std::exp per element cannot be vectorized and cost YOLOv5s a large
// share of its time (docs/performance.md#layer-kernels). Silu computes e^-x
// itself with operations the compiler turns into SIMD code, 16 floats to an
// AVX-512 register:
//   e^z = 2^n * e^r,  n = round(z / ln 2),  r = z - n ln 2,  |r| <= ln(2) / 2,
// with e^r from its Taylor series to r^7 and 2^n written straight into a
// float's exponent bits. All of it is in float: the result is within two ulps
// of the exact SiLU, as PyTorch's float32 F.silu is (tested), x itself where
// e^-x is below half an ulp of 1 (x > 16.7), and -0 below x = -88.4, where
// the exact value is below 4e-37 in magnitude; never NaN but for -inf and NaN.
//
// It was computed in double, rounded to float once (within one ulp), with an
// AVX-512 form of its own. In float it is faster, and the models stay closer
// to float64 than PyTorch float32 by the checks of
// final_project/test/test_end_to_end.cpp (docs/performance.md#fidelity).
#include "kuiper/layers/activation.hpp"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <limits>

namespace kuiper {
namespace {

constexpr float kLog2e = 1.44269504f;
// ln 2 in two parts: n * kLn2High is exact for the n that occur (|n| <= 128),
// so r = z - n ln 2 loses nothing to the product's rounding.
constexpr float kLn2High = 0.693145752f, kLn2Low = 1.42860677e-6f;
// Adding 1.5 * 2^23 rounds z / ln 2 to an integer held in the low mantissa bits.
constexpr float kShifter = 12582912.0f;
// e^r's Taylor coefficients, 1/7! down to 1/0!, for Horner's rule.
constexpr float kTaylor[8] = {1.f / 5040, 1.f / 720, 1.f / 120, 1.f / 24, 1.f / 6, 0.5f, 1.f, 1.f};

inline float Silu(float x) {
  // Clamped, 2^n is 2^-126 at the low end (1 + e^-x rounds to 1: y = x) and
  // 2^128 = infinity at the high end (y = x / inf = -0).
  const float z = std::clamp(-x, -87.4f, 88.8f);
  const float shifted = z * kLog2e + kShifter;
  const float n = shifted - kShifter;
  const float r = (z - n * kLn2High) - n * kLn2Low;
  float p = kTaylor[0];
#pragma GCC unroll 8
  for (int k = 1; k < 8; ++k) p = p * r + kTaylor[k];
  // 2^n: n + 127 in the exponent field (the low bits of `shifted` are n).
  const int32_t exponent = std::bit_cast<int32_t>(shifted) - std::bit_cast<int32_t>(kShifter);
  const float scale = std::bit_cast<float>((exponent + 127) << 23);
  const float y = x / (1.f + p * scale);
  // Keep PyTorch's -inf * sigmoid(-inf) = NaN (the clamp made -inf's y -0).
  return x == -std::numeric_limits<float>::infinity() ? std::numeric_limits<float>::quiet_NaN() : y;
}

}  // namespace

// One version per instruction set; the loader picks the widest this CPU has.
[[gnu::target_clones("default", "avx2", "avx512f")]] void SiluSpan(const float* x, float* y,
                                                                   int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] = Silu(x[i]);
}

[[gnu::target_clones("default", "avx2", "avx512f")]] void AddBiasAndActivate(
    float* x, int64_t n, float bias, Activation activation) {
  switch (activation) {
    case Activation::kNone:
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) x[i] += bias;
      break;
    case Activation::kRelu:
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) x[i] = std::max(x[i] + bias, 0.f);
      break;
    case Activation::kSilu:
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) x[i] = Silu(x[i] + bias);
      break;
  }
}

Activation ActivationOfType(const std::string& type) {
  if (type == "nn.ReLU" || type == "F.relu") return Activation::kRelu;
  if (type == "nn.SiLU" || type == "F.silu") return Activation::kSilu;
  return Activation::kNone;
}

}  // namespace kuiper
