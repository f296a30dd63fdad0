// The core's route for 3x3, stride-1 convolutions: Winograd's F(2x2, 3x3)
// (lab course6's stretch task, README §10.1, computes the same thing one tile at
// a time; here the sum over input channels becomes 16 matrix products), and,
// where RuntimeOptions::winograd_f4 asks for it, F(4x4, 3x3) with 36 (below,
// after F(2x2, 3x3)'s transforms; the GEMMs and chunks are shared).
//
// Each 2x2 block of outputs ("tile") comes from a 4x4 input patch d:
//   Y = A^T [ sum over c of (G g_c G^T) .* (B^T d_c B) ] A
// Element e = (i, j) of the 4x4 sum, over all tiles and output channels, is
//   M_e (tiles x C_out) = V_e (tiles x C_in) * U_e (C_in x C_out),
// with V_e(t, c) = (B^T d_c B)(i, j) of tile t and U_e(c, o) = (G g_oc G^T)(i, j):
// 16 GEMMs of 1/9 of the im2col GEMM's size each, 16/36 = 4/9 of its
// multiply-adds, plus the two transforms, which are additions only.
//
// Each M_e is summed 16 input channels at a time: each 16-term partial sum
// starts from zero in a register and is then added to the running sum (the
// AVX-512 kernel WinogradGemmAvx512; elsewhere one dnnl_sgemm per 16 channels
// with beta = 1, which adds in the same order, bit for bit). The transformed terms
// are larger than the outputs they cancel down to, and one float sum over all
// C_in channels lets its rounding grow with C_in; partial sums of 16 keep each
// layer's rounding below im2col's at 64 to 256 channels: see
// docs/performance.md#winograd-accuracy.
//
// Tiles are numbered column-major like the output (t = ty + tx * tiles_h) and
// cut into chunks of whole tile columns, so that a chunk's V and M stay in the
// cache between the transforms and the GEMMs. An image whose transformed data
// outweighs its transformed kernels (large images, few channels) is cut into
// chunks that the threads share; otherwise (small images, many channels) the
// whole image is one chunk and the threads share each step instead, so the
// kernels are read once.
#include <oneapi/dnnl/dnnl.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <memory>

#include "avx512.hpp"
#include "kuiper/error.hpp"
#include "kuiper/layers/convolution.hpp"
#include "kuiper/parallel.hpp"

namespace kuiper {

namespace {

constexpr int64_t kWinogradElements = 16;    // F(2x2, 3x3)'s 4x4 transformed tile
constexpr int64_t kPartialSumChannels = 16;  // input channels per partial sum of M_e

// Where the CPU has AVX-512, the GEMMs run on a kernel written for its
// 16-float registers (WinogradGemmAvx512); elsewhere on oneDNN's GEMM. Both
// add the same products in the same order. Each channel's tiles are padded
// to whole registers (kLanes).
#if defined(__x86_64__)
constexpr int64_t kLanes = 16;
#else
constexpr int64_t kLanes = 1;
#endif

// `tiles` rounded up to whole registers: the distance between channels' rows.
constexpr int64_t PaddedTiles(int64_t tiles) { return (tiles + kLanes - 1) / kLanes * kLanes; }

// One chunk's work area: tiles [t0, t0 + tiles) of the image, which are the
// tile columns [tx0, tx0 + tiles / tiles_h).
struct WinogradChunk {
  int64_t tx0 = 0, tile_cols = 0, tiles = 0;
  int64_t ld = 0;  // floats from one channel's tiles to the next: tiles, rounded up
  // Floats from one element's matrix to the next: ld x C_in (or C_out) and one
  // cache line more, so that the 16 rows a transform writes (or reads) at once
  // do not fall into the same cache sets (with 256 channels and ld = 64 they
  // were exactly 64 KB apart): see docs/performance.md#winograd-internals.
  int64_t v_stride = 0, m_stride = 0;
  float* v = nullptr;    // elements x (ld x C_in), column-major per element
  float* m = nullptr;    // elements x (ld x C_out)
  float* tmp = nullptr;  // the transforms' columns (one set per thread)
  float* V(int64_t e, int64_t c) const { return v + e * v_stride + c * ld; }  // V_e(0, c)
  float* M(int64_t e, int64_t o) const { return m + e * m_stride + o * ld; }  // M_e(0, o)
};
constexpr int64_t kElementSkew = 16;  // the cache line between elements' matrices

struct WinogradGeometry {
  int64_t tile;        // outputs per tile side: 2 for F(2x2, 3x3), 4 for F(4x4, 3x3)
  int64_t elements;    // (tile + 2)^2: the transformed tile, one GEMM each
  const float* input;  // the group's first input channel
  int64_t in_h, in_w, pad_h, pad_w;
  int64_t out_h, out_w, tiles_h, tiles_w;
  int64_t in_channels, out_channels;
};

// The lanes of channel c's rows of V past the chunk's last tile: the GEMM
// kernel reads them (whole vectors), so they hold zeros, never leftovers (a
// denormal would slow it down).
void ZeroPastTheTiles(const WinogradChunk& k, int64_t elements, int64_t c) {
  for (int64_t e = 0; e < elements; ++e) {
    float* row = k.V(e, c);
    std::fill(row + k.tiles, row + k.ld, 0.f);
  }
}

// The transforms' steps, for one tile column. Portable loops, and (below)
// AVX-512 forms that take 16 tiles at a time and the last few under a mask:
// a tile column has 7, 14 or 28 tiles in ResNet18, and GCC left the tiles
// its 16-wide loops did not cover to narrower or scalar code (perf: scalar
// stores were the hottest instructions of the input transform). Both forms
// add the same values in the same order: the same bits.

// The input transform along x: for the 4 input columns d (n rows each),
// col_0..3 = d_0 - d_2, d_1 + d_2, d_2 - d_1, d_1 - d_3.
[[gnu::target_clones("default", "avx2", "avx512f")]] void InputAlongXPortable(
    const float* const d[4], float* const col[4], int64_t n) {
#pragma omp simd
  for (int64_t y = 0; y < n; ++y) {
    col[0][y] = d[0][y] - d[2][y];
    col[1][y] = d[1][y] + d[2][y];
    col[2][y] = d[2][y] - d[1][y];
    col[3][y] = d[1][y] - d[3][y];
  }
}

// Along y: tile ty reads s[2 ty .. 2 ty + 3] (s holds 2 tiles + 2 floats) and
// writes v_0..3[ty], for ty < tiles.
[[gnu::target_clones("default", "avx2", "avx512f")]] void InputAlongYPortable(const float* s,
                                                                              float* const v[4],
                                                                              int64_t tiles) {
#pragma omp simd
  for (int64_t ty = 0; ty < tiles; ++ty) {
    const float a0 = s[2 * ty], a1 = s[2 * ty + 1], a2 = s[2 * ty + 2], a3 = s[2 * ty + 3];
    v[0][ty] = a0 - a2;
    v[1][ty] = a1 + a2;
    v[2][ty] = a2 - a1;
    v[3][ty] = a1 - a3;
  }
}

// The output transform of one tile column: m[i][j] points at M_(4i+j) of the
// column's first tile. Writes output rows [0, out_h) of column out0 (and of
// out1, the next column, when it is not null):
//   s_j = m0j + m1j + m2j, r_j = m1j - m2j - m3j (output rows 2 ty, 2 ty + 1);
//   out0 = s0 + s1 + s2, r0 + r1 + r2; out1 = s1 - s2 - s3, r1 - r2 - r3.
// `tmp` holds 8 x tiles floats (tiles = (out_h + 1) / 2).
[[gnu::target_clones("default", "avx2", "avx512f")]] void OutputColumnPortable(
    const float* const m[4][4], int64_t out_h, float* out0, float* out1, float* tmp) {
  const int64_t tiles = (out_h + 1) / 2, whole = out_h / 2;  // whole: tiles with both rows
  float* s[4];
  float* r[4];
  for (int j = 0; j < 4; ++j) s[j] = tmp + j * tiles, r[j] = tmp + (4 + j) * tiles;
  for (int j = 0; j < 4; ++j) {
#pragma omp simd
    for (int64_t ty = 0; ty < tiles; ++ty) {
      s[j][ty] = m[0][j][ty] + m[1][j][ty] + m[2][j][ty];
      r[j][ty] = m[1][j][ty] - m[2][j][ty] - m[3][j][ty];
    }
  }
#pragma omp simd
  for (int64_t ty = 0; ty < whole; ++ty) {
    out0[2 * ty] = s[0][ty] + s[1][ty] + s[2][ty];
    out0[2 * ty + 1] = r[0][ty] + r[1][ty] + r[2][ty];
  }
  if (out_h % 2) out0[2 * whole] = s[0][whole] + s[1][whole] + s[2][whole];
  if (!out1) return;
#pragma omp simd
  for (int64_t ty = 0; ty < whole; ++ty) {
    out1[2 * ty] = s[1][ty] - s[2][ty] - s[3][ty];
    out1[2 * ty + 1] = r[1][ty] - r[2][ty] - r[3][ty];
  }
  if (out_h % 2) out1[2 * whole] = s[1][whole] - s[2][whole] - s[3][whole];
}

#if defined(__x86_64__)
// Lanes i of the 32 floats (lo, hi) for i = 0, 2, .. 30 (even) or 1, 3, .. 31.
[[gnu::target("avx512f")]] inline __m512 EvenLanes(__m512 lo, __m512 hi) {
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  return _mm512_permutex2var_ps(lo, even, hi);
}
[[gnu::target("avx512f")]] inline __m512 OddLanes(__m512 lo, __m512 hi) {
  const __m512i odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
  return _mm512_permutex2var_ps(lo, odd, hi);
}

[[gnu::target("avx512f")]] void InputAlongXAvx512(const float* const d[4], float* const col[4],
                                                  int64_t n) {
  for (int64_t y = 0; y < n; y += kLanes) {
    const __m512 d0 = LoadFirst(d[0] + y, n - y), d1 = LoadFirst(d[1] + y, n - y),
                 d2 = LoadFirst(d[2] + y, n - y), d3 = LoadFirst(d[3] + y, n - y);
    StoreFirst(col[0] + y, n - y, _mm512_sub_ps(d0, d2));
    StoreFirst(col[1] + y, n - y, _mm512_add_ps(d1, d2));
    StoreFirst(col[2] + y, n - y, _mm512_sub_ps(d2, d1));
    StoreFirst(col[3] + y, n - y, _mm512_sub_ps(d1, d3));
  }
}

[[gnu::target("avx512f")]] void InputAlongYAvx512(const float* s, float* const v[4],
                                                  int64_t tiles) {
  const int64_t size = 2 * tiles + 2;  // floats of s
  for (int64_t ty = 0; ty < tiles; ty += kLanes) {
    const float* a = s + 2 * ty;
    const int64_t left = size - 2 * ty;
    // Floats 2 ty .. 2 ty + 31 and, shifted by one tile, 2 ty + 2 .. 2 ty + 33.
    const __m512 lo = LoadFirst(a, left), hi = LoadFirst(a + 16, left - 16);
    const __m512 lo2 = LoadFirst(a + 2, left - 2), hi2 = LoadFirst(a + 18, left - 18);
    const __m512 a0 = EvenLanes(lo, hi), a1 = OddLanes(lo, hi);
    const __m512 a2 = EvenLanes(lo2, hi2), a3 = OddLanes(lo2, hi2);
    StoreFirst(v[0] + ty, tiles - ty, _mm512_sub_ps(a0, a2));
    StoreFirst(v[1] + ty, tiles - ty, _mm512_add_ps(a1, a2));
    StoreFirst(v[2] + ty, tiles - ty, _mm512_sub_ps(a2, a1));
    StoreFirst(v[3] + ty, tiles - ty, _mm512_sub_ps(a1, a3));
  }
}

// Output rows 2 ty .. 2 ty + 31 from the values of rows 2 ty + 2i (even) and
// 2 ty + 2i + 1 (odd), i < 16, interleaved; `rows` of them exist from out on.
[[gnu::target("avx512f")]] inline void StoreInterleaved(float* out, int64_t rows, __m512 even,
                                                        __m512 odd) {
  const __m512i low = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
  const __m512i high =
      _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
  StoreFirst(out, rows, _mm512_permutex2var_ps(even, low, odd));
  StoreFirst(out + 16, rows - 16, _mm512_permutex2var_ps(even, high, odd));
}

[[gnu::target("avx512f")]] void OutputColumnAvx512(const float* const m[4][4], int64_t out_h,
                                                   float* out0, float* out1) {
  const int64_t tiles = (out_h + 1) / 2;
  for (int64_t ty = 0; ty < tiles; ty += kLanes) {
    const int64_t n = tiles - ty;
    __m512 s[4], r[4];
    for (int j = 0; j < 4; ++j) {
      const __m512 m0 = LoadFirst(m[0][j] + ty, n), m1 = LoadFirst(m[1][j] + ty, n),
                   m2 = LoadFirst(m[2][j] + ty, n), m3 = LoadFirst(m[3][j] + ty, n);
      s[j] = _mm512_add_ps(_mm512_add_ps(m0, m1), m2);
      r[j] = _mm512_sub_ps(_mm512_sub_ps(m1, m2), m3);
    }
    const int64_t rows = out_h - 2 * ty;
    StoreInterleaved(out0 + 2 * ty, rows, _mm512_add_ps(_mm512_add_ps(s[0], s[1]), s[2]),
                     _mm512_add_ps(_mm512_add_ps(r[0], r[1]), r[2]));
    if (out1) {
      StoreInterleaved(out1 + 2 * ty, rows, _mm512_sub_ps(_mm512_sub_ps(s[1], s[2]), s[3]),
                       _mm512_sub_ps(_mm512_sub_ps(r[1], r[2]), r[3]));
    }
  }
}
#endif

// The steps, on the CPU's best form.
void InputAlongX(const float* const d[4], float* const col[4], int64_t n) {
#if defined(__x86_64__)
  if (kAvx512) return InputAlongXAvx512(d, col, n);
#endif
  InputAlongXPortable(d, col, n);
}
void InputAlongY(const float* s, float* const v[4], int64_t tiles) {
#if defined(__x86_64__)
  if (kAvx512) return InputAlongYAvx512(s, v, tiles);
#endif
  InputAlongYPortable(s, v, tiles);
}
void OutputColumn(const float* const m[4][4], int64_t out_h, float* out0, float* out1, float* tmp) {
#if defined(__x86_64__)
  if (kAvx512) return OutputColumnAvx512(m, out_h, out0, out1);
#endif
  OutputColumnPortable(m, out_h, out0, out1, tmp);
}

// F(4x4, 3x3): each 4x4 block of outputs from a 6x6 input patch,
//   Y = A^T [ sum over c of (G g_c G^T) .* (B^T d_c B) ] A,
// 36 GEMMs of 1/16 of the im2col GEMM's rows each: 36/144 = 1/4 of its
// multiply-adds. The interpolation points are 0, +-3/2, +-2/3 (and infinity),
// not the usual 0, +-1, +-2: the transformed terms then cancel down less, and
// a layer rounds about half as much (docs/performance.md#winograd-f4). Each
// row of B^T and column of A^T is scaled to whole numbers, which floats hold
// exactly, and G carries the inverse scales (it is applied in double):
//   B^T = [36   0 -97   0 36  0]     A^T = [1  8   8 27  27 0]
//         [ 0 -12  -8  27 18  0]           [0 12 -12 18 -18 0]
//         [ 0  12  -8 -27 18  0]           [0 18  18 12  12 0]
//         [ 0 -18 -27   8 12  0]           [0 27 -27  8  -8 1]
//         [ 0  18 -27  -8 12  0]
//         [ 0  36   0 -97  0 36]
constexpr double kKernelF4[6][3] = {{1.0 / 36, 0, 0},
                                    {1.0 / 1170, 1.0 / 780, 1.0 / 520},
                                    {1.0 / 1170, -1.0 / 780, 1.0 / 520},
                                    {-1.0 / 520, -1.0 / 780, -1.0 / 1170},
                                    {-1.0 / 520, 1.0 / 780, -1.0 / 1170},
                                    {0, 0, 1.0 / 36}};  // G

// y = B^T x and y = A^T x for one line of 6 values. Rows 1 and 2 of B^T (and
// rows 3 and 4) differ only in the sign of their terms in x_1 and x_3, so
// each pair is the sum and the difference of one even and one odd part; A^T
// takes x_1 and x_2 (and x_3 and x_4) only as their sum or their difference.
// Both rows of a pair then share their roundings, and the outputs, which
// cancel down from those rows, come out closer to the exact values than with
// each row summed on its own (docs/performance.md#winograd-f4), from fewer
// multiplications.
[[gnu::always_inline]] inline void InputF4(const float (&x)[6], float (&y)[6]) {
  y[0] = 36 * x[0] - 97 * x[2] + 36 * x[4];
  const float even12 = 18 * x[4] - 8 * x[2], odd12 = 27 * x[3] - 12 * x[1];
  y[1] = even12 + odd12;
  y[2] = even12 - odd12;
  const float even34 = 12 * x[4] - 27 * x[2], odd34 = 8 * x[3] - 18 * x[1];
  y[3] = even34 + odd34;
  y[4] = even34 - odd34;
  y[5] = 36 * x[1] - 97 * x[3] + 36 * x[5];
}
[[gnu::always_inline]] inline void OutputF4(const float (&x)[6], float (&y)[4]) {
  const float sum12 = x[1] + x[2], difference12 = x[1] - x[2];
  const float sum34 = x[3] + x[4], difference34 = x[3] - x[4];
  y[0] = x[0] + 8 * sum12 + 27 * sum34;
  y[1] = 12 * difference12 + 18 * difference34;
  y[2] = 18 * sum12 + 12 * sum34;
  y[3] = 27 * difference12 + 8 * difference34 + x[5];
}

// Along x, for the 6 input columns d (n rows each): col_i = sum_b B^T(i, b) d_b.
[[gnu::target_clones("default", "avx2", "avx512f")]] void InputAlongXF4(const float* const d[6],
                                                                        float* const col[6],
                                                                        int64_t n) {
#pragma omp simd
  for (int64_t y = 0; y < n; ++y) {
    const float x[6] = {d[0][y], d[1][y], d[2][y], d[3][y], d[4][y], d[5][y]};
    float t[6];
    InputF4(x, t);
#pragma GCC unroll 6
    for (int i = 0; i < 6; ++i) col[i][y] = t[i];
  }
}

// Along y: tile ty reads s[4 ty .. 4 ty + 5] and writes v_0..5[ty].
[[gnu::target_clones("default", "avx2", "avx512f")]] void InputAlongYF4(const float* s,
                                                                        float* const v[6],
                                                                        int64_t tiles) {
#pragma omp simd
  for (int64_t ty = 0; ty < tiles; ++ty) {
    const float* a = s + 4 * ty;
    const float x[6] = {a[0], a[1], a[2], a[3], a[4], a[5]};
    float t[6];
    InputF4(x, t);
#pragma GCC unroll 6
    for (int i = 0; i < 6; ++i) v[i][ty] = t[i];
  }
}

// The output transform of one tile column, m[i][j] pointing at M_(6i+j) of
// its first tile: along y (t(r, j) = sum_i A^T(r, i) m_ij), then along x,
// into the 4 columns `col` (4 tiles of rows each).
[[gnu::target_clones("default", "avx2", "avx512f")]] void OutputColumnF4(const float* const m[6][6],
                                                                         int64_t tiles,
                                                                         float* const col[4]) {
#pragma omp simd
  for (int64_t ty = 0; ty < tiles; ++ty) {
    float t[4][6];  // t[r][j] = (A^T m_.j)(r)
#pragma GCC unroll 6
    for (int j = 0; j < 6; ++j) {
      const float x[6] = {m[0][j][ty], m[1][j][ty], m[2][j][ty],
                          m[3][j][ty], m[4][j][ty], m[5][j][ty]};
      float y[4];
      OutputF4(x, y);
#pragma GCC unroll 4
      for (int r = 0; r < 4; ++r) t[r][j] = y[r];
    }
#pragma GCC unroll 4
    for (int r = 0; r < 4; ++r) {
      float y[4];
      OutputF4(t[r], y);
#pragma GCC unroll 4
      for (int c = 0; c < 4; ++c) col[c][4 * ty + r] = y[c];
    }
  }
}

// B^T d B for channel c of every tile in the chunk, into V, for tiles of T x T
// outputs (F(2x2, 3x3) or F(4x4, 3x3), whose patches are T + 2 wide). First
// along x (the T + 2 input columns under a tile column, contiguous in memory,
// read in place; a column outside the image reads `zeros`), into T + 2 columns
// `col` of the padded height (row y is input row y - pad_h), then along y.
template <int T>
void WinogradInput(const WinogradGeometry& g, const WinogradChunk& k, int64_t c) {
  constexpr int kPatch = T + 2;
  const int64_t rows = T * g.tiles_h + 2;  // padded input rows the tiles read
  const float* plane = g.input + c * g.in_h * g.in_w;
  float* col[kPatch];
  for (int j = 0; j < kPatch; ++j) col[j] = k.tmp + j * rows;
  float* zeros = k.tmp + kPatch * rows;
  // Rows [first, first + n) of the padded height are input rows 0..n-1; the
  // others are padding in every column, so their column values are 0.
  const int64_t first = std::min<int64_t>(g.pad_h, rows);
  const int64_t n = std::max<int64_t>(0, std::min<int64_t>(rows, g.in_h + g.pad_h) - first);
  std::fill(zeros, zeros + n, 0.f);
  for (int j = 0; j < kPatch; ++j) {
    std::fill(col[j], col[j] + first, 0.f);
    std::fill(col[j] + first + n, col[j] + rows, 0.f);
  }
  float* from_first[kPatch];
  for (int j = 0; j < kPatch; ++j) from_first[j] = col[j] + first;
  for (int64_t txl = 0; txl < k.tile_cols; ++txl) {
    const float* d[kPatch];  // the tile column's input columns from input row 0
    for (int b = 0; b < kPatch; ++b) {
      const int64_t x = T * (k.tx0 + txl) - g.pad_w + b;
      d[b] = x >= 0 && x < g.in_w ? plane + x * g.in_h : zeros;
    }
    if constexpr (T == 2) {
      InputAlongX(d, from_first, n);
    } else {
      InputAlongXF4(d, from_first, n);
    }
    const int64_t t0 = txl * g.tiles_h;
    for (int j = 0; j < kPatch; ++j) {
      float* v[kPatch];  // V_(i (T + 2) + j) of the tile column's first tile
      for (int i = 0; i < kPatch; ++i) v[i] = k.V(i * kPatch + j, c) + t0;
      if constexpr (T == 2) {
        InputAlongY(col[j], v, g.tiles_h);
      } else {
        InputAlongYF4(col[j], v, g.tiles_h);
      }
    }
  }
  ZeroPastTheTiles(k, g.elements, c);
}

// A^T M A for output channel o of every tile in the chunk, written into the
// output's columns (only the outputs that exist: a size that is not a multiple
// of T has partial tiles), then the epilogue on the columns just written.
// F(2x2, 3x3) writes a tile column's 2 output columns straight; F(4x4, 3x3)'s
// 4 go through `tmp` (their rows interleave by tile) and are copied out.
template <int T>
void WinogradOutput(const WinogradGeometry& g, const WinogradChunk& k, int64_t o, float* product,
                    const Epilogue& epilogue) {
  constexpr int kPatch = T + 2;
  float* plane = product + o * g.out_h * g.out_w;
  const float bias = epilogue.bias ? epilogue.bias[o] : 0.f;
  const bool epilogue_on = epilogue.bias || epilogue.activation != Activation::kNone;
  for (int64_t txl = 0; txl < k.tile_cols; ++txl) {
    const int64_t t0 = txl * g.tiles_h;
    const float* m[kPatch][kPatch];
    for (int i = 0; i < kPatch; ++i) {
      for (int j = 0; j < kPatch; ++j) m[i][j] = k.M(i * kPatch + j, o) + t0;
    }
    const int64_t x = T * (k.tx0 + txl);
    const int64_t columns = std::min<int64_t>(T, g.out_w - x);
    float* out = plane + x * g.out_h;  // output column x
    if constexpr (T == 2) {
      OutputColumn(m, g.out_h, out, columns == 2 ? out + g.out_h : nullptr, k.tmp);
    } else {
      float* col[T];
      for (int c = 0; c < T; ++c) col[c] = k.tmp + c * T * g.tiles_h;
      OutputColumnF4(m, g.tiles_h, col);
      for (int c = 0; c < columns; ++c) std::copy_n(col[c], g.out_h, out + c * g.out_h);
    }
    if (epilogue_on) AddBiasAndActivate(out, columns * g.out_h, bias, epilogue.activation);
  }
}

// The GEMM kernel for CPUs with AVX-512 (x86-64; elsewhere oneDNN's GEMM,
// below). M_e(o, t) = sum over c of U_e(o, c) V_e(c, t), for R output
// channels and NV vectors of 16 tiles at a time, in registers: each 16-channel
// partial sum starts from zero in p and is then added to s, the order of
// summation of the oneDNN route, without writing M_e and reading it back
// between partial sums, or packing anything, which makes it faster than
// oneDNN's GEMM on one M_e (docs/performance.md#winograd-internals).
// Rows of V_e and M_e are `ld` floats apart. Every loop over r and n is
// unrolled, so that s, p and x stay in registers (rolled, GCC kept p in memory).
//
// With kPrefetch, each partial sum also asks for R cache lines of the next
// block's U rows (R x C_in floats, contiguous) into L2, in order, so that the
// whole next block has been asked for by the time this one ends. A large U
// comes from memory in a whole model (ResNet18's add up to 67 MB, more than an
// L3 holds), and a block reads it as R streams of C_in floats, each cut short
// by the next block, which the hardware prefetcher did not run ahead of: without
// the prefetches those layers waited for U (docs/performance.md#winograd-prefetch).
// The last whole block's prefetches reach past U_e, into the next element's U
// or past the end of U: a prefetch never faults.
#if defined(__x86_64__)
template <int R, int NV, bool kPrefetch>
[[gnu::target("avx512f"), gnu::always_inline]] inline void WinogradTileBlock(const float* v,
                                                                             const float* u,
                                                                             float* m, int64_t c_in,
                                                                             int64_t ld) {
  __m512 s[R][NV], p[R][NV];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 8
    for (int n = 0; n < NV; ++n) s[r][n] = _mm512_setzero_ps();
  }
  for (int64_t c0 = 0; c0 < c_in; c0 += kPartialSumChannels) {
    const int64_t c1 = std::min(c0 + kPartialSumChannels, c_in);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
#pragma GCC unroll 8
      for (int n = 0; n < NV; ++n) p[r][n] = _mm512_setzero_ps();
    }
    for (int64_t c = c0; c < c1; ++c) {
      __m512 x[NV];
#pragma GCC unroll 8
      for (int n = 0; n < NV; ++n) x[n] = _mm512_loadu_ps(v + c * ld + n * kLanes);
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) {
        const __m512 w = _mm512_set1_ps(u[r * c_in + c]);
#pragma GCC unroll 8
        for (int n = 0; n < NV; ++n) p[r][n] = _mm512_fmadd_ps(x[n], w, p[r][n]);
      }
    }
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
#pragma GCC unroll 8
      for (int n = 0; n < NV; ++n) s[r][n] = _mm512_add_ps(s[r][n], p[r][n]);
    }
    if constexpr (kPrefetch) {
      // Lines R c0 / 16 .. R c0 / 16 + R - 1 of the next block (16 floats a line).
      const char* next = reinterpret_cast<const char*>(u + R * c_in + R * c0);
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) _mm_prefetch(next + 64 * r, _MM_HINT_T1);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 8
    for (int n = 0; n < NV; ++n) _mm512_storeu_ps(m + r * ld + n * kLanes, s[r][n]);
  }
}

// All output channels for NV vectors of tiles from `v` and `m` on: R at a
// time (24 of the 32 registers hold s and p: 6 with one or two vectors, 4
// with three), then the 1 to R - 1 left.
template <int NV, bool kPrefetch>
[[gnu::target("avx512f")]] void WinogradTileColumn(const float* v, const float* u, float* m,
                                                   int64_t c_in, int64_t c_out, int64_t ld) {
  constexpr int R = NV == 3 ? 4 : 6;
  int64_t o = 0;
  for (; o + R <= c_out; o += R) {
    WinogradTileBlock<R, NV, kPrefetch>(v, u + o * c_in, m + o * ld, c_in, ld);
  }
  const float* u_o = u + o * c_in;
  float* m_o = m + o * ld;
  switch (c_out - o) {  // the last block: nothing after it to prefetch
    case 5:
      return WinogradTileBlock<5, NV, false>(v, u_o, m_o, c_in, ld);
    case 4:
      return WinogradTileBlock<4, NV, false>(v, u_o, m_o, c_in, ld);
    case 3:
      return WinogradTileBlock<3, NV, false>(v, u_o, m_o, c_in, ld);
    case 2:
      return WinogradTileBlock<2, NV, false>(v, u_o, m_o, c_in, ld);
    case 1:
      return WinogradTileBlock<1, NV, false>(v, u_o, m_o, c_in, ld);
    default:
      return;
  }
}

// At most this many tiles past the last whole vector take WinogradFewTiles
// instead of a vector of their own.
constexpr int kFewTiles = 4;

// M_e(o, t) for the T tiles t0 .. t0 + T - 1 (T <= kFewTiles) and every
// output channel, the register turned around: lanes over 16 output channels,
// one register per tile. For each block of 16 x 16 weights (16 output
// channels' rows of U_e, 16 input channels each), a transposition in
// registers gives a register of 16 output channels' weights per input
// channel, which is multiplied by the tile's V_e(c, t), broadcast. Each lane
// adds the same products in the same order as WinogradTileBlock's lane of
// that tile (16-channel partial sums, then the running sum): the same bits.
// A 14x14 output (ResNet18's layer3) has 49 tiles: 3 vectors of 16 and one
// tile, which cost its vector kernel a fourth pass for 1 tile in 16 lanes.
template <int T>
[[gnu::target("avx512f")]] void WinogradFewTiles(const float* v, const float* u, float* m,
                                                 int64_t c_in, int64_t c_out, int64_t ld) {
  for (int64_t o0 = 0; o0 < c_out; o0 += kLanes) {
    const int64_t outs = std::min<int64_t>(kLanes, c_out - o0);
    __m512 s[T];
#pragma GCC unroll 4
    for (int t = 0; t < T; ++t) s[t] = _mm512_setzero_ps();
    for (int64_t c0 = 0; c0 < c_in; c0 += kPartialSumChannels) {
      const int64_t channels = std::min(kPartialSumChannels, c_in - c0);
      __m512 w[16];  // w[i] = U_e(o0 + i, c0 ..), then transposed: w[j] = U_e(o0 .., c0 + j)
#pragma GCC unroll 16
      for (int i = 0; i < 16; ++i) {
        w[i] = i < outs ? LoadFirst(u + (o0 + i) * c_in + c0, channels) : _mm512_setzero_ps();
      }
      Transpose16x16(w);
      __m512 p[T];
#pragma GCC unroll 4
      for (int t = 0; t < T; ++t) p[t] = _mm512_setzero_ps();
#pragma GCC unroll 16
      for (int j = 0; j < 16; ++j) {
        if (j == channels) break;
#pragma GCC unroll 4
        for (int t = 0; t < T; ++t) {
          p[t] = _mm512_fmadd_ps(_mm512_set1_ps(v[(c0 + j) * ld + t]), w[j], p[t]);
        }
      }
#pragma GCC unroll 4
      for (int t = 0; t < T; ++t) s[t] = _mm512_add_ps(s[t], p[t]);
    }
    for (int t = 0; t < T; ++t) {
      alignas(64) float lanes[16];
      _mm512_store_ps(lanes, s[t]);
      for (int64_t i = 0; i < outs; ++i) m[(o0 + i) * ld + t] = lanes[i];
    }
  }
}

// Whole vectors of tiles two at a time (the block of V_e they read, C_in x
// 32 floats, is read again for every 6 output channels: 32 KB at 256
// channels, the size of L1), the last three together where their count is
// odd (one vector alone is short of work between its loads: rather 3
// vectors by 4 channels than 1 by 6), then the tiles past the last whole
// vector: up to kFewTiles of them on WinogradFewTiles, more as a vector.
// This order beats every vector two at a time and the last one alone on the
// tile counts of ResNet18's and YOLOv5s's layers, with the same output bits:
// see docs/performance.md#winograd-internals.
template <bool kPrefetch>
[[gnu::target("avx512f")]] void WinogradTileColumns(const float* v, const float* u, float* m,
                                                    int64_t c_in, int64_t c_out, int64_t ld,
                                                    int64_t vectors) {
  int64_t t = 0;
  for (int64_t left = vectors; left > 0;) {
    if (left == 3) return WinogradTileColumn<3, kPrefetch>(v + t, u, m + t, c_in, c_out, ld);
    if (left == 1) return WinogradTileColumn<1, kPrefetch>(v + t, u, m + t, c_in, c_out, ld);
    WinogradTileColumn<2, kPrefetch>(v + t, u, m + t, c_in, c_out, ld);
    t += 2 * kLanes, left -= 2;
  }
}

// U_e of at least this many floats (256 x 256 channels, 256 KB) is read with
// prefetches (WinogradTileBlock). A smaller layer's U (1 MB in all at 128 x
// 128) is more often still in the cache; with the prefetches the 128 x 128
// layers were faster alone but not measurably in the models, so they stay
// without (docs/performance.md#winograd-prefetch).
constexpr int64_t kPrefetchFloats = 256 * 256;

[[gnu::target("avx512f")]] void WinogradGemmAvx512(const float* v, const float* u, float* m,
                                                   int64_t c_in, int64_t c_out, int64_t ld,
                                                   int64_t tiles) {
  const int64_t past = tiles % kLanes;  // tiles past the last whole vector
  const bool few = past > 0 && past <= kFewTiles;
  const int64_t vectors = few ? tiles / kLanes : (tiles + kLanes - 1) / kLanes;
  if (c_in * c_out >= kPrefetchFloats) {
    WinogradTileColumns<true>(v, u, m, c_in, c_out, ld, vectors);
  } else {
    WinogradTileColumns<false>(v, u, m, c_in, c_out, ld, vectors);
  }
  if (!few) return;
  const int64_t t0 = vectors * kLanes;
  static_assert(kFewTiles == 4, "one case per count of tiles below");
  switch (past) {
    case 1:
      return WinogradFewTiles<1>(v + t0, u, m + t0, c_in, c_out, ld);
    case 2:
      return WinogradFewTiles<2>(v + t0, u, m + t0, c_in, c_out, ld);
    case 3:
      return WinogradFewTiles<3>(v + t0, u, m + t0, c_in, c_out, ld);
    default:
      return WinogradFewTiles<4>(v + t0, u, m + t0, c_in, c_out, ld);
  }
}

#endif

// M_e = V_e * U_e as a sum of partial products over 16 input channels each:
// the AVX-512 kernel above, or one oneDNN GEMM per partial product
// (row-major: M_e' = U_e' * V_e').
void WinogradGemm(const WinogradGeometry& g, const WinogradChunk& k, const float* u, int64_t e) {
  const float* u_e = u + e * g.in_channels * g.out_channels;
  const float* v_e = k.V(e, 0);
  float* m_e = k.M(e, 0);
#if defined(__x86_64__)
  if (kAvx512) {
    return WinogradGemmAvx512(v_e, u_e, m_e, g.in_channels, g.out_channels, k.ld, k.tiles);
  }
#endif
  for (int64_t c = 0; c < g.in_channels; c += kPartialSumChannels) {
    const int64_t channels = std::min(kPartialSumChannels, g.in_channels - c);
    dnnl_sgemm('N', 'N', g.out_channels, k.tiles, channels, 1.f, u_e + c, g.in_channels,
               v_e + c * k.ld, k.ld, c == 0 ? 0.f : 1.f, m_e, k.ld);
  }
}

}  // namespace

WinogradKernels::WinogradKernels(const arma::fmat& kernels, uint32_t tile)
    : in_channels_(kernels.n_rows / 9), out_channels_(kernels.n_cols), tile_(tile) {
  if (kernels.n_rows % 9 != 0) {
    throw ShapeError("WinogradKernels: a 3x3 kernel has 9 weights per input channel");
  }
  if (tile != 2 && tile != 4) throw ShapeError("WinogradKernels: tiles of 2x2 or 4x4 outputs");
  u_.resize(elements() * in_channels_ * out_channels_);
  if (tile == 4) {
    // U = G g G^T (6x6) with the table above, in double, rounded once.
    for (uint64_t o = 0; o < out_channels_; ++o) {
      for (uint64_t c = 0; c < in_channels_; ++c) {
        double gg[6][3];  // G g
        for (int i = 0; i < 6; ++i) {
          for (int j = 0; j < 3; ++j) {
            gg[i][j] = 0;
            for (int a = 0; a < 3; ++a) gg[i][j] += kKernelF4[i][a] * kernels(c * 9 + a * 3 + j, o);
          }
        }
        for (int i = 0; i < 6; ++i) {
          for (int j = 0; j < 6; ++j) {
            double sum = 0;
            for (int b = 0; b < 3; ++b) sum += gg[i][b] * kKernelF4[j][b];
            u_[((i * 6 + j) * out_channels_ + o) * in_channels_ + c] = static_cast<float>(sum);
          }
        }
      }
    }
    return;
  }
  for (uint64_t o = 0; o < out_channels_; ++o) {
    for (uint64_t c = 0; c < in_channels_; ++c) {
      // g (3x3, row-major in the kernel's column), G g (4x3), then (G g) G^T (4x4),
      // in double so that U is the exact transform rounded once.
      double gg[4][3];
      for (int j = 0; j < 3; ++j) {
        const double g0 = kernels(c * 9 + 0 * 3 + j, o), g1 = kernels(c * 9 + 1 * 3 + j, o),
                     g2 = kernels(c * 9 + 2 * 3 + j, o);
        gg[0][j] = g0, gg[1][j] = (g0 + g1 + g2) / 2, gg[2][j] = (g0 - g1 + g2) / 2, gg[3][j] = g2;
      }
      for (int i = 0; i < 4; ++i) {
        const double row[4] = {gg[i][0], (gg[i][0] + gg[i][1] + gg[i][2]) / 2,
                               (gg[i][0] - gg[i][1] + gg[i][2]) / 2, gg[i][2]};
        for (int j = 0; j < 4; ++j) {
          u_[((i * 4 + j) * out_channels_ + o) * in_channels_ + c] = static_cast<float>(row[j]);
        }
      }
    }
  }
}

void WinogradMultiplyInto(const Im2ColMatrix& a, const WinogradKernels& kernels, float* product,
                          const Epilogue& epilogue) {
  const ConvParams& p = a.params();
  if (p.kernel_h != 3 || p.kernel_w != 3 || p.stride_h != 1 || p.stride_w != 1 ||
      p.dilation_h != 1 || p.dilation_w != 1 || a.channels() != kernels.in_channels()) {
    throw ShapeError(
        "MultiplyInto: Winograd kernels need a 3x3, stride-1, undilated im2col matrix of their "
        "input channels");
  }
  const ftensor& input = a.input();
  WinogradGeometry g;
  g.tile = kernels.tile(), g.elements = kernels.elements();
  g.input = input.slice(a.first_channel()).memptr();
  g.in_h = input.rows(), g.in_w = input.cols();
  g.pad_h = p.padding_h, g.pad_w = p.padding_w;
  g.out_h = a.out_h(), g.out_w = a.out_w();
  g.tiles_h = (g.out_h + g.tile - 1) / g.tile, g.tiles_w = (g.out_w + g.tile - 1) / g.tile;
  g.in_channels = kernels.in_channels(), g.out_channels = kernels.out_channels();
  if (g.out_h == 0 || g.out_w == 0 || g.in_channels == 0 || g.out_channels == 0) return;
  const float* u = kernels.data();

  // Floats of V and M per tile, and of all 16 U_e.
  const int64_t per_tile = g.elements * (g.in_channels + g.out_channels);
  const int64_t kernel_floats = g.elements * g.in_channels * g.out_channels;
  const int threads = MaxThreads();
  // About 2 MB of V and M per chunk, in whole tile columns (512 KB, which
  // stays in L2, made the GEMMs too small: each partial sum is one call; see
  // docs/performance.md#winograd-internals); the whole image as one chunk when
  // its V and M weigh less than the transformed kernels (each chunk reads all
  // of them), or when there are too few chunks for every thread to get two.
  const int64_t chunk_cols =
      std::clamp<int64_t>((int64_t{1} << 19) / per_tile / g.tiles_h, 1, g.tiles_w);
  int64_t chunks = (g.tiles_w + chunk_cols - 1) / chunk_cols;
  const int64_t image_floats = per_tile * g.tiles_h * g.tiles_w;
  const bool whole = image_floats <= kernel_floats || (threads > 1 && chunks < 2 * threads);
  // Shared chunks: a multiple of the thread count, of (nearly) equal size, so
  // no thread waits for the others (28 tile columns in chunks of 9, 9, 9, 1
  // leave one of 2 threads idle while the other does the fourth; chunks of 7
  // do not: docs/performance.md#winograd-internals).
  chunks = whole ? 1 : std::min<int64_t>((chunks + threads - 1) / threads * threads, g.tiles_w);
  const int64_t cols = (g.tiles_w + chunks - 1) / chunks;  // the widest chunk
  // Each channel's tiles padded to whole vectors of the GEMM kernel.
  const int64_t max_ld = PaddedTiles(cols * g.tiles_h);
  // The transforms' columns: 4 + 1 of zeros for the input, 8 for the output
  // (F(4x4, 3x3): 6 + 1, and 4 columns of 4 tiles of rows).
  const int64_t tmp_floats = g.tile == 4
                                 ? std::max<int64_t>(7 * (4 * g.tiles_h + 2), 16 * g.tiles_h)
                                 : std::max<int64_t>(5 * (2 * g.tiles_h + 2), 8 * g.tiles_h);
  // Chunks shared: each thread its own V, M and columns; one chunk: one V and
  // M, and columns per thread.
  const int64_t vm_floats = max_ld * per_tile + 2 * g.elements * kElementSkew;
  const auto scratch = std::make_unique_for_overwrite<float[]>(
      whole ? vm_floats + threads * tmp_floats : threads * (vm_floats + tmp_floats));

  // The transforms of F(2x2, 3x3) or F(4x4, 3x3); the GEMMs are the same.
  const auto transform_input = [&](const WinogradChunk& k, int64_t c) {
    g.tile == 4 ? WinogradInput<4>(g, k, c) : WinogradInput<2>(g, k, c);
  };
  const auto transform_output = [&](const WinogradChunk& k, int64_t o) {
    g.tile == 4 ? WinogradOutput<4>(g, k, o, product, epilogue)
                : WinogradOutput<2>(g, k, o, product, epilogue);
  };
  const auto chunk_at = [&](int64_t i, float* vm, float* tmp) {  // chunk i of `chunks`
    WinogradChunk k;
    k.tx0 = g.tiles_w * i / chunks;
    k.tile_cols = g.tiles_w * (i + 1) / chunks - k.tx0;
    k.tiles = k.tile_cols * g.tiles_h;
    k.ld = PaddedTiles(k.tiles);
    k.v_stride = g.in_channels * k.ld + kElementSkew;
    k.m_stride = g.out_channels * k.ld + kElementSkew;
    k.v = vm;
    k.m = vm + g.elements * k.v_stride;
    k.tmp = tmp;
    return k;
  };

  if (!whole) {
    // A chunk per part: a thread that falls behind leaves its chunks to the others.
    ParallelRanges(chunks, chunks, [&](int64_t begin, int64_t end, int slot) {
      float* mine = scratch.get() + slot * (vm_floats + tmp_floats);
      for (int64_t i = begin; i < end; ++i) {
        const WinogradChunk k = chunk_at(i, mine, mine + vm_floats);
        for (int64_t c = 0; c < g.in_channels; ++c) transform_input(k, c);
        for (int64_t e = 0; e < g.elements; ++e) WinogradGemm(g, k, u, e);
        for (int64_t o = 0; o < g.out_channels; ++o) transform_output(k, o);
      }
    });
    return;
  }
  // One chunk: its three steps each shared among the threads, the columns of
  // the transforms per thread.
  const auto step = [&](int64_t count, const auto& run) {
    ParallelRanges(count, threads, [&](int64_t begin, int64_t end, int slot) {
      const WinogradChunk k =
          chunk_at(0, scratch.get(), scratch.get() + vm_floats + slot * tmp_floats);
      for (int64_t i = begin; i < end; ++i) run(k, i);
    });
  };
  step(g.in_channels, transform_input);
  step(g.elements, [&](const WinogradChunk& k, int64_t e) { WinogradGemm(g, k, u, e); });
  step(g.out_channels, transform_output);
}

}  // namespace kuiper
