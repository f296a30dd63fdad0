// How far a float32 result is from a reference computed in double, for the
// tests of the core's convolution routes (Winograd, direct).
#pragma once

#include <algorithm>
#include <cmath>
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

}  // namespace kuiper
