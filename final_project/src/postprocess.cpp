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

float IoU(const Box& a, const Box& b) {
  const float area_a = std::max(0.f, a.width()) * std::max(0.f, a.height());
  const float area_b = std::max(0.f, b.width()) * std::max(0.f, b.height());
  const float w = std::max(0.f, std::min(a.x2, b.x2) - std::max(a.x1, b.x1));
  const float h = std::max(0.f, std::min(a.y2, b.y2) - std::max(a.y1, b.y1));
  const float inter = w * h;
  const float uni = area_a + area_b - inter;
  return uni > 0 ? inter / uni : 0.f;
}

std::vector<Detection> DecodeYolo(const std::vector<float>& rows, size_t row_size, float conf) {
  if (row_size < 6 || rows.size() % row_size != 0) {
    throw ShapeError(fmt::format(
        "YOLO output has {} values, not a whole number of rows of {} (box, objectness, classes)",
        rows.size(), row_size));
  }
  std::vector<Detection> out;
  for (size_t start = 0; start < rows.size(); start += row_size) {
    const float* row = rows.data() + start;
    const float objectness = row[4];
    if (!(objectness > conf)) continue;  // score <= objectness, so nothing here can pass
    const float* best = std::max_element(row + 5, row + row_size);
    const float score = objectness * *best;
    if (!(score > conf)) continue;
    Detection d;
    d.box = {row[0] - row[2] / 2, row[1] - row[3] / 2, row[0] + row[2] / 2, row[1] + row[3] / 2};
    d.class_id = static_cast<int>(best - (row + 5));
    d.score = score;
    out.push_back(d);
  }
  return out;
}

std::vector<Detection> Nms(std::vector<Detection> detections, float iou) {
  std::stable_sort(detections.begin(), detections.end(),
                   [](const Detection& a, const Detection& b) { return a.score > b.score; });
  std::vector<Detection> kept;
  for (const Detection& candidate : detections) {
    const bool suppressed = std::any_of(kept.begin(), kept.end(), [&](const Detection& k) {
      return k.class_id == candidate.class_id && IoU(k.box, candidate.box) > iou;
    });
    if (!suppressed) kept.push_back(candidate);
  }
  return kept;
}

Box UnLetterbox(const Box& box, float scale, int pad_left, int pad_top, int width, int height) {
  auto clip = [](float v, int hi) { return std::clamp(v, 0.f, static_cast<float>(hi)); };
  return {clip((box.x1 - pad_left) / scale, width), clip((box.y1 - pad_top) / scale, height),
          clip((box.x2 - pad_left) / scale, width), clip((box.y2 - pad_top) / scale, height)};
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
