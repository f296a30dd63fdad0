// The core's direct route: a convolution computed from the (padded) input
// itself, with no im2col matrix, where a GEMM does worst: small outputs of
// many channels (ResNet18's 512-channel and stride-2 layers at 14x14 and
// 7x7) and layers of few output channels (the stems, YOLOv5s's first
// stride-2 layer); convolution.hpp (GroupKernels, kDirectMaxPositions and
// kDirectAnySizeChannels) says which and why.
//
// It is the im2col product computed in another order. Output channels go into
// the 16 lanes of a register: a register tile holds 4 x 16 output channels of
// 6 output positions (24 registers of running products). For each tap (c, i, j),
// it loads the 64 kernel weights of that tap (packed at load, contiguous) and
// multiplies them by the input value under each of the 6 positions, read
// straight from the input and broadcast to the 16 lanes: the value that
// im2col would have copied into row p, column (c, i, j) of its matrix. The
// sums come out position by position; a 16 x 16 transposition in registers
// writes them into the output, channel by channel.
//
// Where the output columns are tall (the stems, YOLOv5s's stride-2 layers
// with outputs of 160x160 and 80x80), the tile is turned around instead
// (ColumnTile): 3 x 16 output rows of a column in the lanes, 8 output
// channels, each channel's weight of a tap broadcast and the input under the
// rows loaded whole. The sums are then already in the output's layout, with
// no transposition: see docs/performance.md#column-tiles.
//
// The sum over the taps is split: each register tile sums the taps of a
// block of input channels (at most 64 taps, but a whole channel) from zero,
// and these partial sums are added to running sums kept in a buffer (column
// tiles: in the output itself). A float sum's rounding grows with the number
// of terms added to one running sum: with blocks of 288 taps YOLOv5s's early
// layers rounded more than PyTorch's float32 convolutions, and the whole model
// ended further from float64 than PyTorch (docs/performance.md#fidelity). A
// block's partial sums cost one load, add and store per register of running
// sums, against 64 multiply-adds into it. Both kinds of tile add the same
// products in the same order: the same bits.
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <memory>
#include <utility>
#include <vector>

#include "avx512.hpp"
#include "kuiper/error.hpp"
#include "kuiper/layers/convolution.hpp"
#include "kuiper/parallel.hpp"

namespace kuiper {

namespace {

constexpr int64_t kLanes = 16;           // floats per AVX-512 register
constexpr int64_t kMaxBlockVectors = 4;  // registers of output channels per tile, at most
constexpr int64_t kPartialSumTaps = 64;  // taps per partial sum, at most (but a whole channel)
// Running sums per task (positions x the block's channels), 128 KB: a task
// reads its block's kernels once, so fewer, larger ranges read them fewer
// times (32 KB was slower: docs/performance.md#direct-constants).
constexpr int64_t kRangeFloats = 32768;
// Output columns at least this tall take column tiles (ColumnTile). Shorter
// ones waste lanes of their last register: with columns of 28 and 40 rows
// (ResNet18's 64->128 and YOLOv5s's 128->128 stride-2 layers) column tiles
// were slower (docs/performance.md#direct-constants).
constexpr int64_t kColumnRows = 48;

// Where everything is, in floats from the (padded) input of the group.
struct DirectGeometry {
  const float* input;             // input channel c at input + c * channel_floats
  int64_t channel_floats;         // floats per (padded) channel
  int64_t channels, taps;         // input channels, taps per channel (kh * kw)
  const int64_t* tap_offsets;     // tap t = i * kw + j: from a window's corner
  const int64_t* window_corners;  // output position p's window corner
};

#if defined(__x86_64__)

// Positions [p, p + P) of a block of V x 16 output channels, over input
// channels [c0, c1): the partial sum in registers, then into `sums` (V x 16
// floats per position), which it starts when `first`. Also prefetches the
// next channels' kernels, from `prefetch` on, into L2 when that is not null.
template <int V, int P>
[[gnu::target("avx512f")]] void DirectTile(const DirectGeometry& g, const float* w, int64_t c0,
                                           int64_t c1, int64_t p, float* sums, bool first,
                                           const float* prefetch) {
  int64_t corner[P];
#pragma GCC unroll 24
  for (int q = 0; q < P; ++q) corner[q] = g.window_corners[p + q];
  __m512 acc[V][P];
#pragma GCC unroll 24
  for (int v = 0; v < V; ++v) {
#pragma GCC unroll 24
    for (int q = 0; q < P; ++q) acc[v][q] = _mm512_setzero_ps();
  }
  for (int64_t c = c0; c < c1; ++c) {
    const float* channel = g.input + c * g.channel_floats;
    const float* wc = w + c * g.taps * V * kLanes;
    const float* pf = prefetch ? prefetch + (c - c0) * g.taps * V * kLanes : nullptr;
    for (int64_t t = 0; t < g.taps; ++t) {
      const float* x = channel + g.tap_offsets[t];
      if (pf) {
#pragma GCC unroll 24
        for (int v = 0; v < V; ++v) {
          _mm_prefetch(reinterpret_cast<const char*>(pf + (t * V + v) * kLanes), _MM_HINT_T1);
        }
      }
      __m512 wv[V];
#pragma GCC unroll 24
      for (int v = 0; v < V; ++v) wv[v] = _mm512_loadu_ps(wc + (t * V + v) * kLanes);
#pragma GCC unroll 24
      for (int q = 0; q < P; ++q) {
        const __m512 b = _mm512_set1_ps(x[corner[q]]);
#pragma GCC unroll 24
        for (int v = 0; v < V; ++v) acc[v][q] = _mm512_fmadd_ps(wv[v], b, acc[v][q]);
      }
    }
  }
#pragma GCC unroll 24
  for (int q = 0; q < P; ++q) {
#pragma GCC unroll 24
    for (int v = 0; v < V; ++v) {
      float* s = sums + (q * V + v) * kLanes;
      _mm512_storeu_ps(s, first ? acc[v][q] : _mm512_add_ps(_mm512_loadu_ps(s), acc[v][q]));
    }
  }
}

// to[i * ld_to + j] = from[j * ld_from + i] for i, j < 16.
[[gnu::target("avx512f")]] void Transpose16(const float* from, int64_t ld_from, float* to,
                                            int64_t ld_to) {
  __m512 r[16];
#pragma GCC unroll 16
  for (int i = 0; i < 16; ++i) r[i] = _mm512_loadu_ps(from + i * ld_from);
  Transpose16x16(r);
#pragma GCC unroll 16
  for (int k = 0; k < 16; ++k) _mm512_storeu_ps(to + k * ld_to, r[k]);
}

// Output positions per register tile for V registers of output channels:
// 24 running sums in registers (of the 32), and V + 1 for a tap's kernels
// and input value.
constexpr int64_t TilePositions(int64_t vectors) { return 24 / vectors; }

// Positions [p0, p1) in tiles of TilePositions(V), the rest in tiles of 6 or
// fewer. The first tile also prefetches the next block of channels' kernels
// into L2 (the 512-channel layers read 9 MB of kernels from memory).
template <int V>
void DirectTiles(const DirectGeometry& g, const float* w, int64_t c0, int64_t c1, int64_t p0,
                 int64_t p1, float* sums, bool first) {
  constexpr int64_t kP = TilePositions(V);
  const float* next = c1 < g.channels ? w + c1 * g.taps * V * kLanes : nullptr;
  int64_t p = p0;
  for (; p + kP <= p1; p += kP, next = nullptr) {
    DirectTile<V, kP>(g, w, c0, c1, p, sums + (p - p0) * V * kLanes, first, next);
  }
  for (; p + 6 <= p1; p += 6, next = nullptr) {
    DirectTile<V, 6>(g, w, c0, c1, p, sums + (p - p0) * V * kLanes, first, next);
  }
  float* s = sums + (p - p0) * V * kLanes;
  switch (p1 - p) {
    case 1:
      return DirectTile<V, 1>(g, w, c0, c1, p, s, first, next);
    case 2:
      return DirectTile<V, 2>(g, w, c0, c1, p, s, first, next);
    case 3:
      return DirectTile<V, 3>(g, w, c0, c1, p, s, first, next);
    case 4:
      return DirectTile<V, 4>(g, w, c0, c1, p, s, first, next);
    case 5:
      return DirectTile<V, 5>(g, w, c0, c1, p, s, first, next);
    default:
      return;
  }
}

// One task: the first `positions` output positions of a window (see
// CopyWindow) for the block of `vectors` x 16 output channels whose packed
// kernels are `w`, written into `out` (the first of them in the block's first
// output channel; channels m floats apart) with the epilogue.
void DirectRange(const DirectGeometry& g, const float* w, int64_t vectors, int64_t positions,
                 float* sums, float* out, int64_t m, const float* bias, Activation activation) {
  const int64_t block_channels = std::max<int64_t>(1, kPartialSumTaps / g.taps);
  for (int64_t c0 = 0; c0 < g.channels; c0 += block_channels) {
    const int64_t c1 = std::min(g.channels, c0 + block_channels);
    switch (vectors) {
      case 1:
        DirectTiles<1>(g, w, c0, c1, 0, positions, sums, c0 == 0);
        break;
      case 2:
        DirectTiles<2>(g, w, c0, c1, 0, positions, sums, c0 == 0);
        break;
      case 3:
        DirectTiles<3>(g, w, c0, c1, 0, positions, sums, c0 == 0);
        break;
      default:
        DirectTiles<4>(g, w, c0, c1, 0, positions, sums, c0 == 0);
        break;
    }
  }
  // The sums are position-major (the block's channels of a position
  // together); the output is channel-major: transpose while copying out,
  // 16 x 16 at a time in registers, the last positions one by one.
  const int64_t width = vectors * kLanes, whole = positions / kLanes * kLanes;
  for (int64_t o = 0; o < width; o += kLanes) {
    for (int64_t p = 0; p < whole; p += kLanes) {
      Transpose16(sums + p * width + o, width, out + o * m + p, m);
    }
  }
  for (int64_t o = 0; o < width; ++o) {
    float* to = out + o * m;
    for (int64_t p = whole; p < positions; ++p) to[p] = sums[p * width + o];
    if (bias || activation != Activation::kNone) {
      AddBiasAndActivate(to, positions, bias ? bias[o] : 0.f, activation);
    }
  }
}

// Column tiles: the register tile turned around, for layers whose output
// columns are tall (kColumnRows). 16 consecutive output rows of one column go
// into the lanes of a register, kColumnVectors registers down the column,
// for kColumnChannels output channels: 24 running sums again. For each tap it
// loads the input under those 48 rows, contiguous in the window (CopyWindow
// stores a stride-2 layer's columns split by row parity), and broadcasts each
// channel's weight of the tap. The sums are the output's own layout: they
// are kept in the output, with no sums buffer and no transposition. Each
// output value is the same sum in the same order as on the tiles above.
constexpr int64_t kColumnChannels = 8;
constexpr int64_t kColumnVectors = 3;

struct ColumnGeometry {
  const float* window;         // CopyWindow's, with phases = stride_h
  int64_t channel_floats;      // floats per window channel
  int64_t column_step;         // floats from one output column's window to the next
  int64_t channels, taps;      // input channels, taps per channel (kh * kw)
  const int64_t* tap_offsets;  // tap t = i * kw + j: from an output row's first input
  const float* w;              // the block's packed kernels, `width` floats per tap
  int64_t width;
};

// Rows [y, y + rows) (16 (P - 1) < rows <= 16 P) of output column `ox` (of the window), for
// block channels [o, o + 8), over input channels [c0, c1): added to `out`
// (channel o's row y of that column; channels m floats apart), or written
// there when `first`.
template <int P>
[[gnu::target("avx512f")]] void ColumnTile(const ColumnGeometry& g, int64_t ox, int64_t y,
                                           int64_t rows, int64_t o, int64_t c0, int64_t c1,
                                           float* out, int64_t m, bool first) {
  __m512 acc[kColumnChannels][P];
#pragma GCC unroll 8
  for (int v = 0; v < kColumnChannels; ++v) {
#pragma GCC unroll 3
    for (int q = 0; q < P; ++q) acc[v][q] = _mm512_setzero_ps();
  }
  const float* column = g.window + ox * g.column_step + y;
  for (int64_t c = c0; c < c1; ++c) {
    const float* channel = column + c * g.channel_floats;
    const float* wc = g.w + c * g.taps * g.width + o;
    for (int64_t t = 0; t < g.taps; ++t) {
      const float* x = channel + g.tap_offsets[t];
      __m512 in[P];
#pragma GCC unroll 3
      for (int q = 0; q < P; ++q) in[q] = LoadFirst(x + 16 * q, rows - 16 * q);
      const float* wt = wc + t * g.width;
#pragma GCC unroll 8
      for (int v = 0; v < kColumnChannels; ++v) {
        const __m512 b = _mm512_set1_ps(wt[v]);
#pragma GCC unroll 3
        for (int q = 0; q < P; ++q) acc[v][q] = _mm512_fmadd_ps(b, in[q], acc[v][q]);
      }
    }
  }
#pragma GCC unroll 8
  for (int v = 0; v < kColumnChannels; ++v) {
#pragma GCC unroll 3
    for (int q = 0; q < P; ++q) {
      float* to = out + v * m + 16 * q;
      const int64_t n = rows - 16 * q;
      StoreFirst(to, n, first ? acc[v][q] : _mm512_add_ps(LoadFirst(to, n), acc[v][q]));
    }
  }
}

// One task on column tiles: output columns [0, cols) of the window for the
// block's `width` channels, written into `out` (the block's first channel
// at that range's first position; channels m floats apart) with the epilogue.
void ColumnRange(const ColumnGeometry& g, int64_t cols, int64_t out_h, float* out, int64_t m,
                 const float* bias, Activation activation) {
  const int64_t block_channels = std::max<int64_t>(1, kPartialSumTaps / g.taps);
  // Each column in as few tiles as it takes, their registers shared out
  // evenly (160 rows: 3 + 3 + 2 + 2 registers rather than 3 + 3 + 3 + 1).
  const int64_t vectors = (out_h + 15) / 16;
  const int64_t tiles = (vectors + kColumnVectors - 1) / kColumnVectors;
  for (int64_t c0 = 0; c0 < g.channels; c0 += block_channels) {
    const int64_t c1 = std::min(g.channels, c0 + block_channels);
    for (int64_t o = 0; o < g.width; o += kColumnChannels) {
      for (int64_t ox = 0; ox < cols; ++ox) {
        float* to = out + o * m + ox * out_h;
        for (int64_t k = 0; k < tiles; ++k) {
          const int64_t y = vectors * k / tiles * 16;
          const int64_t rows = std::min(out_h, vectors * (k + 1) / tiles * 16) - y;
          if (rows > 32) {
            ColumnTile<3>(g, ox, y, rows, o, c0, c1, to + y, m, c0 == 0);
          } else if (rows > 16) {
            ColumnTile<2>(g, ox, y, rows, o, c0, c1, to + y, m, c0 == 0);
          } else {
            ColumnTile<1>(g, ox, y, rows, o, c0, c1, to + y, m, c0 == 0);
          }
        }
      }
    }
  }
  if (!bias && activation == Activation::kNone) return;
  for (int64_t o = 0; o < g.width; ++o) {
    AddBiasAndActivate(out + o * m, cols * out_h, bias ? bias[o] : 0.f, activation);
  }
}

// Input columns [x0, x0 + cols) of the group's `channels` channels (in_h x
// in_w each, column-major), each column with pad_h zeros above and below
// (ph = in_h + 2 pad_h rows), and columns outside the input all zeros: the
// part of the zero-padded input that a range of output columns reads. With
// `phases` = s > 1 each column is stored split by row number mod s (rows 0,
// s, 2s, .. then rows 1, s + 1, .., each phase ceil(ph / s) floats, zeros
// after the last row), so that the rows a stride-s column of outputs reads
// are neighbours.
void CopyWindow(const float* input, int64_t channels, int64_t in_h, int64_t in_w, int64_t pad_h,
                int64_t x0, int64_t cols, int64_t phases, float* window) {
  const int64_t ph = in_h + 2 * pad_h, phase_floats = (ph + phases - 1) / phases;
  const int64_t column_floats = phases * phase_floats;
  for (int64_t c = 0; c < channels; ++c) {
    for (int64_t xw = 0; xw < cols; ++xw) {
      float* to = window + (c * cols + xw) * column_floats;
      const int64_t x = x0 + xw;
      if (x < 0 || x >= in_w) {
        std::fill(to, to + column_floats, 0.f);
        continue;
      }
      const float* from = input + (c * in_w + x) * in_h;
      if (phases == 1) {
        std::fill(to, to + pad_h, 0.f);
        std::copy(from, from + in_h, to + pad_h);
        std::fill(to + pad_h + in_h, to + ph, 0.f);
        continue;
      }
      for (int64_t phase = 0; phase < phases; ++phase) {
        // Row phase + k * phases is input row phase + k * phases - pad_h.
        float* row = to + phase * phase_floats;
        const int64_t first = std::min(phase_floats, (pad_h - phase + phases - 1) / phases);
        const int64_t last =
            std::clamp<int64_t>((pad_h + in_h - phase + phases - 1) / phases, first, phase_floats);
        std::fill(row, row + first, 0.f);
        const float* in = from + phase + first * phases - pad_h;
        if (phases == 2) {  // the common case, with a stride the compiler can vectorize
          for (int64_t k = first; k < last; ++k) row[k] = in[(k - first) * 2];
        } else {
          for (int64_t k = first; k < last; ++k) row[k] = in[(k - first) * phases];
        }
        std::fill(row + last, row + phase_floats, 0.f);
      }
    }
  }
}

#endif

// The rows x cols row-major matrix at `a` becomes its cols x rows transpose,
// in place: element i goes to i * rows mod (rows * cols - 1) (the first and
// last stay), and each cycle of that permutation is followed once.
void TransposeInPlace(float* a, uint64_t rows, uint64_t cols) {
  const uint64_t size = rows * cols;
  if (size < 3) return;
  std::vector<bool> moved(size);
  for (uint64_t start = 1; start + 1 < size; ++start) {
    if (moved[start]) continue;
    float carried = a[start];
    uint64_t i = start;
    do {
      i = i * rows % (size - 1);
      std::swap(carried, a[i]);
      moved[i] = true;
    } while (i != start);
  }
}

}  // namespace

bool DirectKernels::Fits(uint64_t out_channels) { return out_channels % kLanes == 0; }
bool DirectKernels::Fast() { return kAvx512; }

DirectKernels::DirectKernels(arma::fmat kernels)
    : rows_(kernels.n_rows), out_channels_(kernels.n_cols) {
  if (!Fits(out_channels_)) {
    throw ShapeError("DirectKernels: the output channels must be a multiple of 16");
  }
  // Blocks of 4 registers of output channels (fewer for the last). Halving
  // them so that two threads could share a 64-channel layer by its output
  // channels was slower, on one thread and on two
  // (docs/performance.md#direct-constants).
  block_out_ = kLanes * std::min<uint64_t>(kMaxBlockVectors, out_channels_ / kLanes);
  // A block's columns are contiguous (width kernels of rows_ taps each):
  // transposed in place, so that no second copy of the weights is made (a
  // copy of a block beside them raised the peak memory by more than the
  // block: docs/performance.md#direct-constants).
  for (uint64_t o0 = 0; o0 < out_channels_; o0 += block_out_) {
    TransposeInPlace(kernels.colptr(o0), std::min(block_out_, out_channels_ - o0), rows_);
  }
  w_ = std::move(kernels);
}

arma::fmat DirectKernels::Matrix() const {
  arma::fmat kernels = w_;
  for (uint64_t o0 = 0; o0 < out_channels_; o0 += block_out_) {
    TransposeInPlace(kernels.colptr(o0), rows_, std::min(block_out_, out_channels_ - o0));
  }
  return kernels;
}

void DirectMultiplyInto(const Im2ColMatrix& a, const DirectKernels& kernels, float* product,
                        const Epilogue& epilogue) {
  if (a.n_cols() != kernels.rows()) {
    throw ShapeError("MultiplyInto: direct kernels of another kernel size or channel count");
  }
  const int64_t m = a.n_rows(), out_channels = kernels.out_channels();
  if (m == 0 || out_channels == 0) return;
#if defined(__x86_64__)
  if (!kAvx512) return MultiplyInto(a, kernels.Matrix(), product, epilogue);
  const ConvParams& p = a.params();
  const ftensor& input = a.input();
  const int64_t in_h = input.rows(), in_w = input.cols(), channels = a.channels();
  const int64_t out_h = a.out_h(), out_w = a.out_w();
  const int64_t ph = in_h + 2 * p.padding_h;

  // Tasks: ranges of whole output columns, each with about kRangeFloats of
  // running sums per block of output channels, times those blocks; range
  // after range, so a thread's consecutive tasks mostly share their range.
  const int64_t block_out = kernels.block_out();
  const int64_t blocks = (out_channels + block_out - 1) / block_out;
  // Tall output columns take column tiles, with the window's columns split
  // by row phase for their stride.
  const bool columns = out_h >= kColumnRows;
  const int64_t range_cols = std::clamp<int64_t>(kRangeFloats / block_out / out_h, 1, out_w);
  const int64_t ranges = (out_w + range_cols - 1) / range_cols;
  const int64_t max_cols = (out_w + ranges - 1) / ranges;  // ranges are cut evenly below
  const int64_t phases = columns ? p.stride_h : 1;
  const int64_t phase_floats = (ph + phases - 1) / phases, column_floats = phases * phase_floats;
  // The input columns the widest range reads.
  const int64_t window_cols = (max_cols - 1) * p.stride_w + (p.kernel_w - 1) * p.dilation_w + 1;
  const int64_t window_floats = channels * window_cols * column_floats;
  const int64_t sums_floats = columns ? 0 : max_cols * out_h * block_out;

  // Register tiles find each position's window by its corner; column tiles
  // step down a column instead.
  std::vector<int64_t> tap_offsets(p.kernel_h * p.kernel_w),
      window_corners(columns ? 0 : max_cols * out_h);
  for (int64_t i = 0; i < p.kernel_h; ++i) {
    for (int64_t j = 0; j < p.kernel_w; ++j) {
      const int64_t row = i * p.dilation_h;
      tap_offsets[i * p.kernel_w + j] =
          row % phases * phase_floats + row / phases + j * p.dilation_w * column_floats;
    }
  }
  for (int64_t ox = 0; ox < max_cols && !columns; ++ox) {
    for (int64_t oy = 0; oy < out_h; ++oy) {
      window_corners[oy + ox * out_h] = oy * p.stride_h + ox * p.stride_w * ph;
    }
  }

  const int threads = MaxThreads();
  const auto scratch =
      std::make_unique_for_overwrite<float[]>(threads * (window_floats + sums_floats));
  const float* group_input = input.slice(a.first_channel()).memptr();
  ParallelRanges(ranges * blocks, threads, [&](int64_t first, int64_t last, int slot) {
    float* window = scratch.get() + slot * (window_floats + sums_floats);
    float* sums = window + window_floats;
    int64_t copied = -1;  // the range whose window this thread holds
    for (int64_t task = first; task < last; ++task) {
      const int64_t r = task / blocks, b = task % blocks;
      const int64_t ox0 = out_w * r / ranges, ox1 = out_w * (r + 1) / ranges;
      if (r != copied) {
        CopyWindow(group_input, channels, in_h, in_w, p.padding_h,
                   ox0 * p.stride_w - int64_t{p.padding_w}, window_cols, phases, window);
        copied = r;
      }
      const int64_t o0 = b * block_out, width = std::min(block_out, out_channels - o0);
      const float* w = kernels.data() + o0 * kernels.rows();
      float* out = product + o0 * m + ox0 * out_h;
      const float* bias = epilogue.bias ? epilogue.bias + o0 : nullptr;
      if (columns) {
        const ColumnGeometry g{window,
                               window_cols * column_floats,
                               p.stride_w * column_floats,
                               channels,
                               static_cast<int64_t>(tap_offsets.size()),
                               tap_offsets.data(),
                               w,
                               width};
        ColumnRange(g, ox1 - ox0, out_h, out, m, bias, epilogue.activation);
        continue;
      }
      const DirectGeometry g{window,
                             window_cols * ph,
                             channels,
                             static_cast<int64_t>(tap_offsets.size()),
                             tap_offsets.data(),
                             window_corners.data()};
      DirectRange(g, w, width / kLanes, (ox1 - ox0) * out_h, sums, out, m, bias,
                  epilogue.activation);
    }
  });
#else
  MultiplyInto(a, kernels.Matrix(), product, epilogue);
#endif
}

}  // namespace kuiper
