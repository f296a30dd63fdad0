// What the engine's hand-written AVX-512 kernels share (Winograd's transforms
// and GEMM, the direct convolution, SiLU): whether this CPU has AVX-512, and
// loads and stores of a last, partial register. Each of those kernels has
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
#else
inline constexpr bool kAvx512 = false;
#endif

}  // namespace kuiper
