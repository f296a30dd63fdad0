// Turning network outputs into answers: class probabilities for ResNet18 and
// boxes for YOLOv5s. Plain functions on plain vectors, so that tests can feed
// them hand-computed cases.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace kuiper::app {

// exp(x_i - max) / sum: the max is subtracted so large logits cannot overflow.
std::vector<float> Softmax(const std::vector<float>& logits);

struct Ranked {
  int index = 0;
  float value = 0;
};

// The k largest values, largest first; equal values keep index order.
// k larger than the input returns all of it.
std::vector<Ranked> TopK(const std::vector<float>& values, size_t k);

// An axis-aligned box in pixels, corners (x1, y1) top-left and (x2, y2) bottom-right.
struct Box {
  float x1 = 0, y1 = 0, x2 = 0, y2 = 0;
  float width() const { return x2 - x1; }
  float height() const { return y2 - y1; }
};

// Intersection over union; 0 when either box has no area.
float IoU(const Box& a, const Box& b);

struct Detection {
  Box box;
  int class_id = 0;
  float score = 0;
};

// YOLOv5 rows (cx, cy, w, h, objectness, class scores...), `row_size` floats
// each, row-major. A row becomes a candidate with its best class and
// score = objectness * class score when that score is above `conf`, as
// YOLOv5's non_max_suppression does (single label per box).
std::vector<Detection> DecodeYolo(const std::vector<float>& rows, size_t row_size, float conf);

// Greedy non-maximum suppression within each class: boxes are taken by
// descending score and a box is dropped when its IoU with a kept box of the
// same class exceeds `iou`. Boxes of different classes never suppress each
// other. The result is sorted by descending score.
std::vector<Detection> Nms(std::vector<Detection> detections, float iou);

// Undoes a letterbox (scale, then pad): (x - pad_left) / scale, and likewise
// for y, then clips to the original width x height.
Box UnLetterbox(const Box& box, float scale, int pad_left, int pad_top, int width, int height);

// One label per line (imagenet_classes.txt, coco_classes.txt). Throws
// kuiper::Error naming the file when it cannot be read.
std::vector<std::string> LoadLabels(const std::string& path);

// labels[index], or "class <index>" when there is no such label.
std::string LabelOf(const std::vector<std::string>& labels, int index);

}  // namespace kuiper::app
