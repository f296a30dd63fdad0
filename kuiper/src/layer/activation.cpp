// The activations a layer applies to its own output (activation.hpp), and
// SiLU's arithmetic. SiLU (swish), y = x * sigmoid(x) = x / (1 + e^-x), is the
// activation of every YOLOv5 conv block: 23.7 million values per YOLOv5s image.
//
// A call to std::exp per element cannot be vectorized and cost YOLOv5s a large
// share of its time (docs/performance.md#layer-kernels). SiluSpan computes e^-x
// itself with operations the compiler turns into SIMD code, in double precision:
//   e^z = 2^n * e^r,  n = round(z / ln 2),  r = z - n ln 2,  |r| <= ln(2) / 2,
// with e^r from its Taylor series to r^7 (relative error below 6e-9) and 2^n
// written straight into a double's exponent bits; the division is in double
// too. Rounded to float once, at the end, the result is the float nearest the
// exact SiLU but in rare near-ties (tested: within one ulp; over all 2^32
// floats, 558,858 are one ulp off), more accurate than x / (1 + std::exp(-x))
// in float, which rounds three times.
//
// Where the CPU has AVX-512, SiluAvx512 does the same operations in the same
// order with intrinsics (the same bits for every float, checked over all
// 2^32): GCC's vectorization of Silu below evaluates the division twice more
// for the clamped ends, and the intrinsics are faster
// (docs/performance.md#layer-kernels).
#include "kuiper/layers/activation.hpp"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <limits>

#include "avx512.hpp"

namespace kuiper {
namespace {

constexpr double kLog2e = 1.4426950408889634, kLn2 = 0.6931471805599453;
// Adding 1.5 * 2^52 rounds z / ln 2 to an integer held in the low mantissa bits.
constexpr double kShifter = 6755399441055744.0;
// e^r's Taylor coefficients, 1/7! down to 1/0!, for Horner's rule.
constexpr double kTaylor[8] = {1.0 / 5040, 1.0 / 720, 1.0 / 120, 1.0 / 24, 1.0 / 6, 0.5, 1.0, 1.0};

inline float Silu(float x) {
  // e^-x for x beyond +-200 is 0 or infinite as far as a float SiLU can tell:
  // clamping keeps 2^n inside the double range (NaN still comes out of the
  // division below).
  const double z = std::clamp(-static_cast<double>(x), -200.0, 200.0);
  const double shifted = z * kLog2e + kShifter;
  const double n = shifted - kShifter;
  const double r = z - n * kLn2;
  double p = kTaylor[0];
#pragma GCC unroll 8
  for (int k = 1; k < 8; ++k) p = p * r + kTaylor[k];
  // 2^n: n + 1023 in the exponent field (the low bits of `shifted` are n).
  const int64_t exponent = std::bit_cast<int64_t>(shifted) - std::bit_cast<int64_t>(kShifter);
  const double scale = std::bit_cast<double>((exponent + 1023) << 52);
  // Dividing in double too leaves one rounding, at the end, where float
  // arithmetic would round e, 1 + e and the quotient. That is measurable on
  // YOLOv5s's error against float64, for a few percent of its time
  // (docs/performance.md#layer-kernels). (p * scale is exact, scale being a
  // power of two, so a fused multiply-add gives the same sum.)
  const float y = static_cast<float>(static_cast<double>(x) / (1.0 + p * scale));
  // The clamp made e^inf finite: keep PyTorch's -inf / (1 + inf) = NaN.
  return x == -std::numeric_limits<float>::infinity() ? std::numeric_limits<float>::quiet_NaN() : y;
}

#if defined(__x86_64__)
// GCC 12 warns falsely inside the intrinsics below (their unused source
// operand is left uninitialized).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
// Silu's steps up to the rounding to float, on 8 lanes.
[[gnu::target("avx512f")]] inline __m512d SiluInDouble(__m512d x) {
  const __m512d z =
      _mm512_min_pd(_mm512_max_pd(_mm512_sub_pd(_mm512_setzero_pd(), x), _mm512_set1_pd(-200.0)),
                    _mm512_set1_pd(200.0));
  const __m512d shifter = _mm512_set1_pd(kShifter);
  const __m512d shifted = _mm512_fmadd_pd(z, _mm512_set1_pd(kLog2e), shifter);
  const __m512d n = _mm512_sub_pd(shifted, shifter);
  const __m512d r = _mm512_fnmadd_pd(n, _mm512_set1_pd(kLn2), z);
  __m512d p = _mm512_set1_pd(kTaylor[0]);
#pragma GCC unroll 8
  for (int k = 1; k < 8; ++k) p = _mm512_fmadd_pd(p, r, _mm512_set1_pd(kTaylor[k]));
  const __m512i exponent =
      _mm512_sub_epi64(_mm512_castpd_si512(shifted), _mm512_castpd_si512(shifter));
  const __m512d scale = _mm512_castsi512_pd(
      _mm512_slli_epi64(_mm512_add_epi64(exponent, _mm512_set1_epi64(1023)), 52));
  return _mm512_div_pd(x, _mm512_fmadd_pd(p, scale, _mm512_set1_pd(1.0)));
}

// y[i] = Silu(x[i] + bias), or Silu(x[i]) without the bias (adding 0 would
// turn -0 into +0), 16 floats at a time.
[[gnu::target("avx512f")]] void SiluAvx512(const float* x, float* y, int64_t n, bool add_bias,
                                           float bias) {
  const __m512 minus_inf = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
  const __m512 nan = _mm512_set1_ps(std::numeric_limits<float>::quiet_NaN());
  for (int64_t i = 0; i < n; i += 16) {
    __m512 v = LoadFirst(x + i, n - i);
    if (add_bias) v = _mm512_add_ps(v, _mm512_set1_ps(bias));
    const __m512d low = _mm512_cvtps_pd(_mm512_castps512_ps256(v));
    const __m512d high =
        _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
    const __m256 low_y = _mm512_cvtpd_ps(SiluInDouble(low));
    const __m256 high_y = _mm512_cvtpd_ps(SiluInDouble(high));
    __m512 out = _mm512_castpd_ps(_mm512_insertf64x4(
        _mm512_castps_pd(_mm512_castps256_ps512(low_y)), _mm256_castps_pd(high_y), 1));
    // -inf / (1 + inf) = NaN, as in Silu.
    out = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(v, minus_inf, _CMP_EQ_OQ), out, nan);
    StoreFirst(y + i, n - i, out);
  }
}
#pragma GCC diagnostic pop
#endif

// One version per instruction set; the loader picks the widest this CPU has.
[[gnu::target_clones("default", "avx2", "avx512f")]] void AddBiasAndActivatePortable(
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

}  // namespace

[[gnu::target_clones("default", "avx2", "avx512f")]] void SiluSpanPortable(const float* x, float* y,
                                                                           int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] = Silu(x[i]);
}

void SiluSpan(const float* x, float* y, int64_t n) {
#if defined(__x86_64__)
  if (kAvx512) return SiluAvx512(x, y, n, false, 0.f);
#endif
  SiluSpanPortable(x, y, n);
}

void AddBiasAndActivate(float* x, int64_t n, float bias, Activation activation) {
#if defined(__x86_64__)
  if (kAvx512 && activation == Activation::kSilu) return SiluAvx512(x, x, n, true, bias);
#endif
  AddBiasAndActivatePortable(x, n, bias, activation);
}

Activation ActivationOfType(const std::string& type) {
  if (type == "nn.ReLU" || type == "F.relu") return Activation::kRelu;
  if (type == "nn.SiLU" || type == "F.silu") return Activation::kSilu;
  return Activation::kNone;
}

}  // namespace kuiper
