#include "postprocess.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <numeric>

#include "kuiper/error.hpp"

namespace kuiper::app {

std::vector<float> Softmax(const std::vector<float>& logits) {
  if (logits.empty()) return {};
  const float max = *std::max_element(logits.begin(), logits.end());
  std::vector<float> out(logits.size());
  double sum = 0;
  for (size_t i = 0; i < logits.size(); ++i) {
    out[i] = std::exp(logits[i] - max);
    sum += out[i];
  }
  for (float& p : out) p = static_cast<float>(p / sum);
  return out;
}

std::vector<Ranked> TopK(const std::vector<float>& values, size_t k) {
  std::vector<Ranked> ranked(values.size());
  for (size_t i = 0; i < values.size(); ++i) ranked[i] = {static_cast<int>(i), values[i]};
  k = std::min(k, ranked.size());
  std::partial_sort(ranked.begin(), ranked.begin() + static_cast<std::ptrdiff_t>(k), ranked.end(),
                    [](const Ranked& a, const Ranked& b) {
                      return a.value != b.value ? a.value > b.value : a.index < b.index;
                    });
  ranked.resize(k);
  return ranked;
}

std::vector<std::string> LoadLabels(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error(fmt::format("cannot read the class names file '{}'", path));
  std::vector<std::string> labels;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    labels.push_back(line);
  }
  return labels;
}

std::string LabelOf(const std::vector<std::string>& labels, int index) {
  if (index >= 0 && static_cast<size_t>(index) < labels.size()) return labels[index];
  return fmt::format("class {}", index);
}

}  // namespace kuiper::app
