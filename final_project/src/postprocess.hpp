// Turning network outputs into answers: class probabilities for ResNet18 and
// boxes for YOLOv5s (decoding, NMS and the letterbox undo are lab course8_capstone's,
// kuiper/vision.hpp). Plain functions on plain vectors, so that tests can feed them
// hand-computed cases.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "kuiper/vision.hpp"

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

// Box, Detection, IoU, DecodeYolo, Nms and UnLetterbox: kuiper/vision.hpp, written in
// lab course8_capstone (the names are found from this namespace, kuiper::app).

// One label per line (imagenet_classes.txt, coco_classes.txt). Throws
// kuiper::Error naming the file when it cannot be read.
std::vector<std::string> LoadLabels(const std::string& path);

// labels[index], or "class <index>" when there is no such label.
std::string LabelOf(const std::vector<std::string>& labels, int index);

}  // namespace kuiper::app
