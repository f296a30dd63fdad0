// Turning an image into the tensor a network expects: the two recipes of the
// final project (ImageNet classification and YOLOv5 letterboxing), written as
// small functions so that tests can check each step on hand-computed cases. The
// steps on pixels (layout, resize, normalisation) are lab course8_capstone's
// (kuiper/vision.hpp); OpenCV decodes and letterboxes.
#pragma once

#include <array>
#include <opencv2/core.hpp>
#include <string>

#include "kuiper/tensor.hpp"
#include "kuiper/vision.hpp"

namespace kuiper::app {

// Reads an image file as 8-bit RGB (OpenCV decodes to BGR; we swap once here).
// Throws kuiper::Error naming the file when it is missing or not an image, and
// ResourceError when its float copy (RgbToTensor) would exceed the memory limit.
cv::Mat LoadRgbImage(const std::string& path);

// An 8-bit RGB image (CV_8UC3) as a (3, H, W) tensor in [0, 1]: torchvision's
// ToTensor, by the capstone's ImageToChw (kuiper/vision.hpp).
sftensor RgbToTensor(const cv::Mat& rgb8);

// torchvision's Resize(resize) + CenterCrop(crop) on a (3, H, W) tensor: the
// shorter side becomes `resize` (the longer one int(resize * long / short), as
// torchvision truncates), bilinear with half-pixel centres (the capstone's
// ResizeBilinear, equal to PyTorch's interpolate(mode="bilinear",
// align_corners=False)), then the centre crop x crop square
// (top = round((h - crop) / 2)).
sftensor ResizeCenterCrop(const Tensor<float>& chw, int resize, int crop);

// ImageNet statistics used by torchvision's pretrained classifiers.
inline constexpr std::array<float, 3> kImageNetMean = {0.485f, 0.456f, 0.406f};
inline constexpr std::array<float, 3> kImageNetStd = {0.229f, 0.224f, 0.225f};

// torchvision's ImageNet recipe for a crop x crop input: ToTensor, resize to
// round(crop / 0.875) (256 for 224), centre crop, ImageNet normalisation (the
// capstone's Normalize).
sftensor ClassifyInput(const cv::Mat& rgb8, int crop = 224);

// An image letterboxed into a square, and how to undo it.
struct Letterboxed {
  cv::Mat image;     // size x size, same type as the input
  float scale = 1;   // original pixels * scale = letterboxed pixels
  int pad_left = 0;  // columns of grey added on the left
  int pad_top = 0;   // rows of grey added on top
};

// YOLOv5's letterbox: scale = min(size / h, size / w), resized to
// (round(w * scale), round(h * scale)) with bilinear interpolation, then
// padded to size x size with `pad_value` (YOLOv5: 114 on 8-bit images),
// centred as YOLOv5 does: top = round(dh - 0.1), bottom = round(dh + 0.1)
// with dh = (size - new_h) / 2, and likewise left/right.
Letterboxed Letterbox(const cv::Mat& image, int size, double pad_value = 114);

}  // namespace kuiper::app
