// The image side of a vision model, on plain pixels and plain rows: what turns an
// image into the classifier's input tensor, and what turns the detector's output
// rows into boxes on the image. The engine never reads an image file; the `kuiper`
// CLI (final_project) decodes and letterboxes with OpenCV and calls these.
// Lab course8_capstone writes them (course8_capstone/README.md).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "kuiper/tensor.hpp"

namespace kuiper {

// ---- pre-processing (torchvision: ToTensor, Resize, Normalize) ----

// The order of the three bytes of a pixel: OpenCV decodes to BGR, the models take RGB.
enum class PixelOrder { kRgb, kBgr };

// An 8-bit image of rows x cols pixels, 3 bytes each, row after row (HWC, the layout of
// an OpenCV CV_8UC3 image), as a (3, rows, cols) tensor of RGB planes in [0, 1]:
// out(c, y, x) = byte / 255 of channel c (R, G, B) at row y, column x. `order` says which
// byte of a pixel is red. Throws ShapeError when rows or cols is 0 or `hwc` does not hold
// rows * cols * 3 bytes.
sftensor ImageToChw(const std::vector<uint8_t>& hwc, uint32_t rows, uint32_t cols,
                    PixelOrder order);

// Each channel c of a (C, H, W) tensor resized to rows x cols by bilinear interpolation
// with half-pixel centres, as PyTorch's interpolate(mode="bilinear", align_corners=False,
// antialias=False) and OpenCV's INTER_LINEAR: output pixel x reads the input at
// (x + 0.5) * in / out - 0.5 (computed in double and rounded to float once, as OpenCV
// does), clamped to [0, in - 1] at the borders. Throws ShapeError when rows or cols is 0.
sftensor ResizeBilinear(const Tensor<float>& chw, uint32_t rows, uint32_t cols);

// In place, channel c of a (3, H, W) tensor becomes (x - mean[c]) / stddev[c].
// Throws ShapeError when the tensor has not 3 channels.
void Normalize(Tensor<float>& chw, const std::array<float, 3>& mean,
               const std::array<float, 3>& stddev);

// ---- post-processing (YOLOv5: non_max_suppression, scale_boxes) ----

// An axis-aligned box in pixels, corners (x1, y1) top-left and (x2, y2) bottom-right.
// Pixel coordinates are continuous: a box from 0 to 10 is 10 wide.
struct Box {
  float x1 = 0, y1 = 0, x2 = 0, y2 = 0;
  float width() const { return x2 - x1; }
  float height() const { return y2 - y1; }
};

struct Detection {
  Box box;
  int class_id = 0;
  float score = 0;
};

// Intersection over union, width = x2 - x1 (no "+1"); 0 when the union has no area.
float IoU(const Box& a, const Box& b);

// YOLOv5 Detect rows (cx, cy, w, h, objectness, one score per class), `row_size` floats
// each, row-major, in the letterboxed input's pixels. A row becomes a detection of its
// best class (the first one on a tie) with score = objectness * class score and corners
// cx -+ w / 2, cy -+ h / 2, when that score is strictly above `conf` (YOLOv5 keeps
// conf > conf_thres). Rows keep their order. Throws ShapeError when row_size < 6 or
// rows.size() is not a multiple of it.
std::vector<Detection> DecodeYolo(const std::vector<float>& rows, size_t row_size, float conf);

// Greedy non-maximum suppression within each class, as torchvision's batched_nms:
// detections are taken by descending score (equal scores: input order), and one is
// dropped when its IoU with a kept detection of the same class is strictly above `iou`.
// Detections of different classes never suppress each other. The result is sorted by
// descending score.
std::vector<Detection> Nms(std::vector<Detection> detections, float iou);

// Undoes a letterbox (image pixels * scale, then pad_left columns and pad_top rows of
// padding): x -> (x - pad_left) / scale, y -> (y - pad_top) / scale, then each corner is
// clipped to the original image, [0, width] x [0, height].
Box UnLetterbox(const Box& box, float scale, int pad_left, int pad_top, int width, int height);

}  // namespace kuiper
