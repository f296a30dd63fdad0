#include "kuiper/layers/resize.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "kuiper/parallel.hpp"

namespace kuiper {

float SourceCoordinate(CoordinateMode mode, uint32_t dst, float scale, uint32_t in_size,
                       uint32_t out_size) {
  switch (mode) {
    case CoordinateMode::kHalfPixel:
      return (static_cast<float>(dst) + 0.5f) * scale - 0.5f;
    case CoordinateMode::kAlignCorners: {
      const float corner_scale =
          out_size > 1 ? static_cast<float>(in_size - 1) / static_cast<float>(out_size - 1) : 0.f;
      return static_cast<float>(dst) * corner_scale;
    }
    case CoordinateMode::kAsymmetric:
      return static_cast<float>(dst) * scale;
    case CoordinateMode::kPytorchHalfPixel:
      return out_size > 1 ? (static_cast<float>(dst) + 0.5f) * scale - 0.5f : 0.f;
    case CoordinateMode::kTfHalfPixelForNn:
      return (static_cast<float>(dst) + 0.5f) * scale;
  }
  return 0.f;
}

namespace {

// For one axis: the two input indices each output index blends and the
// weight of the second (the first gets 1 - weight).
struct LinearTaps {
  std::vector<uint32_t> low, high;
  std::vector<float> weight;
};

LinearTaps ComputeTaps(CoordinateMode mode, float scale, uint32_t in_size, uint32_t out_size) {
  LinearTaps taps;
  for (uint32_t dst = 0; dst < out_size; ++dst) {
    // Clamping at 0 gives the edge pixel, as both PyTorch and ONNX do.
    const float src = std::max(SourceCoordinate(mode, dst, scale, in_size, out_size), 0.f);
    const uint32_t low = std::min(static_cast<uint32_t>(src), in_size - 1);
    const uint32_t high = low + 1 < in_size ? low + 1 : low;
    taps.low.push_back(low);
    taps.high.push_back(high);
    taps.weight.push_back(std::clamp(src - static_cast<float>(low), 0.f, 1.f));
  }
  return taps;
}

float Round(float x, NearestRounding rounding) {
  switch (rounding) {
    case NearestRounding::kFloor:
      return std::floor(x);
    case NearestRounding::kCeil:
      return std::ceil(x);
    case NearestRounding::kRoundPreferFloor:
      return x == std::floor(x) + 0.5f ? std::floor(x) : std::round(x);
    case NearestRounding::kRoundPreferCeil:
      return x == std::floor(x) + 0.5f ? std::ceil(x) : std::round(x);
  }
  return std::floor(x);
}

std::vector<uint32_t> NearestIndices(CoordinateMode mode, float scale, uint32_t in_size,
                                     uint32_t out_size, NearestRounding rounding) {
  std::vector<uint32_t> indices;
  for (uint32_t dst = 0; dst < out_size; ++dst) {
    const float src = Round(SourceCoordinate(mode, dst, scale, in_size, out_size), rounding);
    indices.push_back(static_cast<uint32_t>(std::clamp(src, 0.f, static_cast<float>(in_size - 1))));
  }
  return indices;
}

// For one axis: the four input indices each output index reads and their
// weights (ONNX's cubic; see CubicOptions).
struct CubicTaps {
  std::vector<uint32_t> index;  // 4 per output index
  std::vector<float> weight;    // 4 per output index
};

CubicTaps ComputeCubicTaps(CoordinateMode mode, float scale, uint32_t in_size, uint32_t out_size,
                           CubicOptions cubic) {
  CubicTaps taps;
  const double a = cubic.a;
  // The kernel at distance d: (a+2)|d|^3 - (a+3)|d|^2 + 1 for |d| <= 1,
  // a|d|^3 - 5a|d|^2 + 8a|d| - 4a for 1 < |d| < 2.
  const auto kernel = [a](double d) {
    d = std::abs(d);
    if (d <= 1) return ((a + 2) * d - (a + 3)) * d * d + 1;
    if (d < 2) return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a;
    return 0.0;
  };
  for (uint32_t dst = 0; dst < out_size; ++dst) {
    const double src = SourceCoordinate(mode, dst, scale, in_size, out_size);
    const double base = std::floor(src);
    const double ratio = src - base;
    double w[4];
    int64_t idx[4];
    double sum = 0;
    for (int k = 0; k < 4; ++k) {
      idx[k] = static_cast<int64_t>(base) - 1 + k;
      w[k] = kernel(ratio + 1 - k);
      if (cubic.exclude_outside && (idx[k] < 0 || idx[k] >= static_cast<int64_t>(in_size))) {
        w[k] = 0;
      }
      sum += w[k];
    }
    for (int k = 0; k < 4; ++k) {
      taps.index.push_back(
          static_cast<uint32_t>(std::clamp<int64_t>(idx[k], 0, static_cast<int64_t>(in_size) - 1)));
      taps.weight.push_back(static_cast<float>(cubic.exclude_outside ? w[k] / sum : w[k]));
    }
  }
  return taps;
}

// fn(input channel, output channel) for every channel, shared among the
// threads (on the calling thread inside a batch loop's body).
template <typename Fn>
void ForEachChannel(const ftensor& input, ftensor& output, const Fn& fn) {
  ParallelFor(input.channels(), [&](int64_t c) { fn(input.slice(c), output.slice(c)); });
}

}  // namespace

void Resize(const ftensor& input, ftensor& output, ResizeMode mode, CoordinateMode coordinates,
            float scale_h, float scale_w, NearestRounding rounding, CubicOptions cubic) {
  const uint32_t in_h = input.rows(), in_w = input.cols();
  const uint32_t out_h = output.rows(), out_w = output.cols();
  if (mode == ResizeMode::kBicubic) {
    const CubicTaps ys = ComputeCubicTaps(coordinates, scale_h, in_h, out_h, cubic);
    const CubicTaps xs = ComputeCubicTaps(coordinates, scale_w, in_w, out_w, cubic);
    ForEachChannel(input, output, [&](const arma::fmat& in, arma::fmat& out) {
      for (uint32_t x = 0; x < out_w; ++x) {
        for (uint32_t y = 0; y < out_h; ++y) {
          double sum = 0;  // 16 taps: summed in double, rounded once
          for (int i = 0; i < 4; ++i) {
            double row = 0;
            for (int j = 0; j < 4; ++j) {
              row += static_cast<double>(xs.weight[4 * x + j]) *
                     in(ys.index[4 * y + i], xs.index[4 * x + j]);
            }
            sum += ys.weight[4 * y + i] * row;
          }
          out(y, x) = static_cast<float>(sum);
        }
      }
    });
    return;
  }
  if (mode == ResizeMode::kNearest) {
    const std::vector<uint32_t> ys = NearestIndices(coordinates, scale_h, in_h, out_h, rounding);
    const std::vector<uint32_t> xs = NearestIndices(coordinates, scale_w, in_w, out_w, rounding);
    ForEachChannel(input, output, [&](const arma::fmat& in, arma::fmat& out) {
      for (uint32_t x = 0; x < out_w; ++x) {
        float* to = out.colptr(x);
        // Upsampling repeats whole columns: copy the one just made.
        if (x > 0 && xs[x] == xs[x - 1]) {
          std::copy_n(out.colptr(x - 1), out_h, to);
          continue;
        }
        const float* from = in.colptr(xs[x]);
        for (uint32_t y = 0; y < out_h; ++y) to[y] = from[ys[y]];
      }
    });
    return;
  }
  const LinearTaps ys = ComputeTaps(coordinates, scale_h, in_h, out_h);
  const LinearTaps xs = ComputeTaps(coordinates, scale_w, in_w, out_w);
  ForEachChannel(input, output, [&](const arma::fmat& in, arma::fmat& out) {
    for (uint32_t x = 0; x < out_w; ++x) {
      const uint32_t x0 = xs.low[x], x1 = xs.high[x];
      const float wx1 = xs.weight[x], wx0 = 1.f - wx1;
      for (uint32_t y = 0; y < out_h; ++y) {
        const uint32_t y0 = ys.low[y], y1 = ys.high[y];
        const float wy1 = ys.weight[y], wy0 = 1.f - wy1;
        out(y, x) = wy0 * (wx0 * in(y0, x0) + wx1 * in(y0, x1)) +
                    wy1 * (wx0 * in(y1, x0) + wx1 * in(y1, x1));
      }
    }
  });
}

}  // namespace kuiper
