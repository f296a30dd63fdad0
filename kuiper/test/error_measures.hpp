// How far a float32 result is from a reference computed in double, for the
// tests of the core's convolution routes (Winograd, direct) and the model
// checks (final_project/test/test_end_to_end.cpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace kuiper {

// max |got - ref| / max(1, max |ref|): the project's relative error. A NaN
// in `got` (the tests fill outputs with NaN first: a value never written) is
// an infinite error, not one that std::max would skip.
inline double RelativeError(const std::vector<float>& got, const std::vector<double>& ref) {
  double diff = 0, scale = 1;
  for (size_t i = 0; i < ref.size(); ++i) {
    if (std::isnan(got[i])) return INFINITY;
    diff = std::max(diff, std::abs(got[i] - ref[i]));
    scale = std::max(scale, std::abs(ref[i]));
  }
  return diff / scale;
}

// The rms of (got - ref) over the rms of ref.
inline double RmsError(const float* got, const std::vector<double>& ref) {
  double error = 0, size = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    error += (got[i] - ref[i]) * (got[i] - ref[i]);
    size += ref[i] * ref[i];
  }
  return std::sqrt(error / size);
}

// The robust measures of tools/fidelity.py (its docstring says why), over
// all values of an output: the root mean square and the 99.9th percentile of
// each value's relative error
//   e = |got - ref| / (|ref| + floor_k),  floor_k = 1e-3 * max |ref| over the values of kind k,
// the percentile as NumPy's default takes it (linear interpolation between
// the two nearest ranks). A NaN in `got` makes both infinite.
struct RobustErrors {
  double rms = 0;
  double p999 = 0;
};

// kinds[i] (0, 1, ...) is ref[i]'s kind; empty: every value is of one kind.
template <typename Ref>
RobustErrors RobustRelativeErrors(const std::vector<float>& got, const std::vector<Ref>& ref,
                                  const std::vector<int>& kinds = {}) {
  const auto kind = [&](size_t i) { return kinds.empty() ? 0 : kinds[i]; };
  std::vector<double> floor;
  for (size_t i = 0; i < ref.size(); ++i) {
    const size_t k = kind(i);
    if (k >= floor.size()) floor.resize(k + 1, 0.0);
    floor[k] = std::max(floor[k], 1e-3 * std::abs(static_cast<double>(ref[i])));
  }
  std::vector<double> e(ref.size());
  double squares = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    if (std::isnan(got[i])) return {INFINITY, INFINITY};
    const double r = ref[i];
    e[i] = std::abs(got[i] - r) / (std::abs(r) + floor[kind(i)]);
    squares += e[i] * e[i];
  }
  if (e.empty()) return {};
  // The 0.999 quantile at rank h = 0.999 (n - 1): e's h-th smallest value,
  // or, between two ranks, the point that far along from one to the next.
  const double h = 0.999 * static_cast<double>(e.size() - 1);
  const size_t low = static_cast<size_t>(h);
  std::nth_element(e.begin(), e.begin() + low, e.end());
  const double below = e[low];
  const double above = low + 1 < e.size() ? *std::min_element(e.begin() + low + 1, e.end()) : below;
  return {std::sqrt(squares / static_cast<double>(e.size())), below + (h - low) * (above - below)};
}

}  // namespace kuiper
