#include "metrics.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "kuiper/error.hpp"

namespace kuiper::app {

float MaxAbs(const std::vector<float>& a) {
  float max = 0;
  for (float v : a) max = std::isnan(v) ? v : std::max(max, std::abs(v));
  return max;
}

float MaxAbsDiff(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) {
    throw ShapeError(fmt::format("cannot compare {} values with {}", a.size(), b.size()));
  }
  float max = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const float diff = std::abs(a[i] - b[i]);
    if (std::isnan(diff)) return std::numeric_limits<float>::quiet_NaN();
    max = std::max(max, diff);
  }
  return max;
}

double Quantile(std::vector<double> values, double q) {
  if (values.empty()) throw Error("no timings to summarise");
  std::sort(values.begin(), values.end());
  const double position = std::clamp(q, 0.0, 1.0) * static_cast<double>(values.size() - 1);
  const auto below = static_cast<size_t>(std::floor(position));
  const size_t above = std::min(below + 1, values.size() - 1);
  const double fraction = position - static_cast<double>(below);
  return values[below] + fraction * (values[above] - values[below]);
}

}  // namespace kuiper::app
