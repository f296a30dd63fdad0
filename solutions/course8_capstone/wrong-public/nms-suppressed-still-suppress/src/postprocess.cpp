// Lab course8_capstone, part 2: the detector's post-processing (YOLOv5's
// non_max_suppression and scale_boxes). See course8_capstone/README.md.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "kuiper/error.hpp"
#include "kuiper/vision.hpp"

namespace kuiper {

float IoU(const Box& a, const Box& b) {
  // TODO(course8): intersection area / union area, with width = x2 - x1 (no "+1"); a
  // box with x2 < x1 has no area; 0 when the union is empty (README "IoU").
  // ---- your code begins ----
  const float area_a = std::max(0.f, a.width()) * std::max(0.f, a.height());
  const float area_b = std::max(0.f, b.width()) * std::max(0.f, b.height());
  const float w = std::max(0.f, std::min(a.x2, b.x2) - std::max(a.x1, b.x1));
  const float h = std::max(0.f, std::min(a.y2, b.y2) - std::max(a.y1, b.y1));
  const float inter = w * h;
  const float uni = area_a + area_b - inter;
  return uni > 0 ? inter / uni : 0.f;
  // ---- your code ends ----
}

std::vector<Detection> DecodeYolo(const std::vector<float>& rows, size_t row_size, float conf) {
  // TODO(course8): one detection per row whose best class score times objectness is
  // strictly above `conf`, the box from centre and size to corners; refuse a row size
  // below 6 or a partial row with ShapeError (README "Decoding the Detect rows").
  // ---- your code begins ----
  if (row_size < 6 || rows.size() % row_size != 0) {
    throw ShapeError(fmt::format(
        "YOLO output has {} values, not a whole number of rows of {} (box, objectness, classes)",
        rows.size(), row_size));
  }
  std::vector<Detection> out;
  for (size_t start = 0; start < rows.size(); start += row_size) {
    const float* row = rows.data() + start;
    const float* best = std::max_element(row + 5, row + row_size);  // first of equal maxima
    const float score = row[4] * *best;
    if (!(score > conf)) continue;  // NaN never passes
    Detection d;
    d.box = {row[0] - row[2] / 2, row[1] - row[3] / 2, row[0] + row[2] / 2, row[1] + row[3] / 2};
    d.class_id = static_cast<int>(best - (row + 5));
    d.score = score;
    out.push_back(d);
  }
  return out;
  // ---- your code ends ----
}

std::vector<Detection> Nms(std::vector<Detection> detections, float iou) {
  // TODO(course8): greedy NMS per class: by descending score (stable for ties), keep a
  // detection unless a kept one of the same class overlaps it by IoU > iou (README
  // "Non-maximum suppression").
  // ---- your code begins ----
  std::stable_sort(detections.begin(), detections.end(),
                   [](const Detection& a, const Detection& b) { return a.score > b.score; });
  std::vector<Detection> kept;
  for (size_t i = 0; i < detections.size(); ++i) {
    const Detection& candidate = detections[i];
    const bool suppressed =
        std::any_of(detections.begin(), detections.begin() + i, [&](const Detection& k) {
          return k.class_id == candidate.class_id && IoU(k.box, candidate.box) > iou;
        });
    if (!suppressed) kept.push_back(candidate);
  }
  return kept;
  // ---- your code ends ----
}

Box UnLetterbox(const Box& box, float scale, int pad_left, int pad_top, int width, int height) {
  // TODO(course8): subtract the padding, then divide by the scale, then clip each
  // corner to [0, width] x [0, height] (README "Undoing the letterbox").
  // ---- your code begins ----
  auto clip = [](float v, int hi) { return std::clamp(v, 0.f, static_cast<float>(hi)); };
  return {clip((box.x1 - static_cast<float>(pad_left)) / scale, width),
          clip((box.y1 - static_cast<float>(pad_top)) / scale, height),
          clip((box.x2 - static_cast<float>(pad_left)) / scale, width),
          clip((box.y2 - static_cast<float>(pad_top)) / scale, height)};
  // ---- your code ends ----
}

}  // namespace kuiper
