// e^x in plain float arithmetic that a compiler turns into SIMD code.
//
// std::exp is a call into libm per element, which no loop vectorizes. SiLU
// needs one exponential per element of every YOLOv5s convolution output
// (about 27 million per 640x640 image), where those calls cost more than the
// convolutions' own GEMMs. This is the classic Cephes construction that SIMD
// math libraries use: e^x = 2^n * e^r with n = round(x / ln 2) and
// |r| <= ln(2) / 2, e^r from a degree-7 polynomial, 2^n built in the
// exponent bits. Relative error within 2 ulp of std::exp over the clamped
// range; test in kuiper/test/test_fast_exp.cpp.
#pragma once

#include <bit>
#include <cstdint>

namespace kuiper {

inline float FastExp(float x) {
  // Keep 2^n a normal float: e^88.37 ~ 2.4e38 and e^-87.33 ~ 1.2e-38 are the
  // extremes (std::exp would give inf and denormals/0 beyond them). NaN passes
  // through both comparisons unchanged.
  x = x > 88.37626f ? 88.37626f : x;
  x = x < -87.33654f ? -87.33654f : x;
  // n = round(x * log2(e)): adding 1.5 * 2^23 rounds to an integer in the
  // mantissa without a rounding instruction. A NaN x takes n = 0 (converting
  // NaN to an integer is undefined) and still yields NaN through r.
  const float magic = 12582912.f;
  const float n = ((x == x ? x : 0.f) * 1.44269504f + magic) - magic;
  // r = x - n * ln2, with ln2 split in two so the product stays exact.
  const float r = (x - n * 0.693359375f) + n * 2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const float e_r = p * r * r + r + 1.f;
  const float two_n = std::bit_cast<float>((static_cast<int32_t>(n) + 127) << 23);
  return e_r * two_n;
}

}  // namespace kuiper
