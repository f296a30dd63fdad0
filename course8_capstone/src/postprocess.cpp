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
  KUIPER_TODO("course8", "IoU");
  // ---- your code ends ----
}

std::vector<Detection> DecodeYolo(const std::vector<float>& rows, size_t row_size, float conf) {
  // TODO(course8): one detection per row whose best class score times objectness is
  // strictly above `conf`, the box from centre and size to corners; refuse a row size
  // below 6 or a partial row with ShapeError (README "Decoding the Detect rows").
  // ---- your code begins ----
  KUIPER_TODO("course8", "DecodeYolo");
  // ---- your code ends ----
}

std::vector<Detection> Nms(std::vector<Detection> detections, float iou) {
  // TODO(course8): greedy NMS per class: by descending score (stable for ties), keep a
  // detection unless a kept one of the same class overlaps it by IoU > iou (README
  // "Non-maximum suppression").
  // ---- your code begins ----
  KUIPER_TODO("course8", "Nms");
  // ---- your code ends ----
}

Box UnLetterbox(const Box& box, float scale, int pad_left, int pad_top, int width, int height) {
  // TODO(course8): subtract the padding, then divide by the scale, then clip each
  // corner to [0, width] x [0, height] (README "Undoing the letterbox").
  // ---- your code begins ----
  KUIPER_TODO("course8", "UnLetterbox");
  // ---- your code ends ----
}

}  // namespace kuiper
