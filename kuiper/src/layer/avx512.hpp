// What the engine's hand-written AVX-512 kernels share (Winograd's transforms
// and GEMM, the direct convolution, SiLU): whether this CPU has AVX-512,
// loads and stores of a last, partial register, and a 16 x 16 transposition
// in registers. Each of those kernels has
// another path for CPUs without AVX-512; its file says which, and how its
// results compare.
#pragma once

#include <cstdint>
#if defined(__x86_64__)
#include <immintrin.h>

#include <algorithm>
#endif

namespace kuiper {

#if defined(__x86_64__)
inline const bool kAvx512 = __builtin_cpu_supports("avx512f");

// The first n of 16 lanes (none for n <= 0, all for n >= 16).
[[gnu::target("avx512f")]] inline __mmask16 FirstLanes(int64_t n) {
  return n >= 16 ? __mmask16{0xffff} : static_cast<__mmask16>((1u << std::max<int64_t>(n, 0)) - 1);
}

// p[0 .. min(n, 16)), zeros in the other lanes; reads nothing past p + n.
// Masked only for a last, partial vector; whole vectors load and store plainly.
[[gnu::target("avx512f")]] inline __m512 LoadFirst(const float* p, int64_t n) {
  return n >= 16 ? _mm512_loadu_ps(p) : _mm512_maskz_loadu_ps(FirstLanes(n), p);
}

// Writes the first min(n, 16) lanes of x to p (none for n <= 0).
[[gnu::target("avx512f")]] inline void StoreFirst(float* p, int64_t n, __m512 x) {
  if (n >= 16) return _mm512_storeu_ps(p, x);
  _mm512_mask_storeu_ps(p, FirstLanes(n), x);
}

// The 16 x 16 floats r[0..15] (row i in r[i]) become their transpose (lane j
// of r[i] moves to lane i of r[j]): four rounds of shuffles, each
// interleaving pairs of rows at twice the previous width.
[[gnu::target("avx512f"), gnu::always_inline]] inline void Transpose16x16(__m512 r[16]) {
  // The masked (all lanes) forms of the shuffles: GCC 12 warns falsely inside
  // the plain ones (their unused source operand is left uninitialized).
  constexpr __mmask16 kAll = 0xffff;
  constexpr __mmask8 kAll8 = 0xff;
  __m512 t[16], u[16];
#pragma GCC unroll 8
  for (int i = 0; i < 16; i += 2) {  // 1-float pairs
    t[i] = _mm512_maskz_unpacklo_ps(kAll, r[i], r[i + 1]);
    t[i + 1] = _mm512_maskz_unpackhi_ps(kAll, r[i], r[i + 1]);
  }
#pragma GCC unroll 4
  for (int i = 0; i < 16; i += 4) {  // 2-float pairs
    for (int k = 0; k < 2; ++k) {
      u[i + k] = _mm512_castpd_ps(_mm512_maskz_unpacklo_pd(kAll8, _mm512_castps_pd(t[i + k]),
                                                           _mm512_castps_pd(t[i + k + 2])));
      u[i + k + 2] = _mm512_castpd_ps(_mm512_maskz_unpackhi_pd(kAll8, _mm512_castps_pd(t[i + k]),
                                                               _mm512_castps_pd(t[i + k + 2])));
    }
  }
#pragma GCC unroll 2
  for (int i = 0; i < 16; i += 8) {  // 4-float lanes
    for (int k = 0; k < 4; ++k) {
      t[i + k] = _mm512_maskz_shuffle_f32x4(kAll, u[i + k], u[i + k + 4], 0x88);
      t[i + k + 4] = _mm512_maskz_shuffle_f32x4(kAll, u[i + k], u[i + k + 4], 0xdd);
    }
  }
  // The rounds leave column c of the input in u[kRow[c]]: they swap the middle pairs.
  constexpr int kRow[16] = {0, 2, 1, 3, 4, 6, 5, 7, 8, 10, 9, 11, 12, 14, 13, 15};
#pragma GCC unroll 8
  for (int k = 0; k < 8; ++k) {  // 8-float halves
    u[k] = _mm512_maskz_shuffle_f32x4(kAll, t[k], t[k + 8], 0x88);
    u[k + 8] = _mm512_maskz_shuffle_f32x4(kAll, t[k], t[k + 8], 0xdd);
  }
#pragma GCC unroll 16
  for (int k = 0; k < 16; ++k) r[kRow[k]] = u[k];
}
#else
inline constexpr bool kAvx512 = false;
#endif

}  // namespace kuiper
