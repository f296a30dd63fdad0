#include "preprocess.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include "kuiper/error.hpp"
#include "kuiper/memory_limit.hpp"

namespace kuiper::app {

namespace {

// Python's round(): halves go to the even neighbour. YOLOv5 computes its
// letterbox geometry with it, so we must too to land on the same pixels.
int PythonRound(double value) { return static_cast<int>(std::nearbyint(value)); }

// While it lives, file descriptor 2 points at /dev/null. The image decoders
// (libpng, libjpeg) and OpenCV's imread print their own complaints about a
// damaged file there, and the CLI's error must stay one line of its own.
class SilencedStderr {
 public:
  SilencedStderr() : saved_(dup(STDERR_FILENO)) {
    const int null = open("/dev/null", O_WRONLY);
    if (null >= 0) {
      dup2(null, STDERR_FILENO);
      close(null);
    }
  }
  ~SilencedStderr() {
    if (saved_ < 0) return;
    std::fflush(stderr);
    dup2(saved_, STDERR_FILENO);
    close(saved_);
  }
  SilencedStderr(const SilencedStderr&) = delete;
  SilencedStderr& operator=(const SilencedStderr&) = delete;

 private:
  int saved_;
};

}  // namespace

cv::Mat LoadRgbImage(const std::string& path) {
  if (!std::filesystem::is_regular_file(path)) {
    const char* problem = std::filesystem::exists(path) ? "is not a file" : "does not exist";
    throw Error(fmt::format("image '{}' {}", path, problem));
  }
  cv::Mat bgr;
  {
    const SilencedStderr silenced;
    bgr = cv::imread(path, cv::IMREAD_COLOR);
  }
  if (bgr.empty()) {
    throw Error(fmt::format("'{}' is not an image OpenCV can read (PNG, JPEG, BMP, ...)", path));
  }
  // A small file can decode to a huge image, and RgbToTensor copies it into
  // three floats per pixel.
  const uint64_t pixels = static_cast<uint64_t>(bgr.rows) * static_cast<uint64_t>(bgr.cols);
  CheckMemory(SaturatingMultiply(pixels, 3 * sizeof(float)),
              fmt::format("image '{}' ({}x{}) as float32", path, bgr.cols, bgr.rows));
  cv::Mat rgb;
  cv::cvtColor(bgr, rgb, cv::COLOR_BGR2RGB);
  return rgb;
}

sftensor RgbToTensor(const cv::Mat& rgb8) {
  if (rgb8.type() != CV_8UC3) throw ShapeError("expected an 8-bit, 3-channel image");
  const cv::Mat packed = rgb8.isContinuous() ? rgb8 : rgb8.clone();
  const std::vector<uint8_t> bytes(packed.data, packed.data + packed.total() * 3);
  return ImageToChw(bytes, static_cast<uint32_t>(packed.rows), static_cast<uint32_t>(packed.cols),
                    PixelOrder::kRgb);
}

sftensor ResizeCenterCrop(const Tensor<float>& chw, int resize, int crop) {
  const auto h = static_cast<int64_t>(chw.rows()), w = static_cast<int64_t>(chw.cols());
  if (h <= 0 || w <= 0 || resize <= 0 || crop <= 0 || crop > resize) {
    throw ShapeError(
        fmt::format("cannot resize a {}x{} image to {} and crop {}", w, h, resize, crop));
  }
  const int64_t short_side = std::min(h, w), long_side = std::max(h, w);
  const auto new_long = static_cast<uint32_t>(resize * long_side / short_side);
  const auto side = static_cast<uint32_t>(resize);
  const sftensor resized =
      h <= w ? ResizeBilinear(chw, side, new_long) : ResizeBilinear(chw, new_long, side);
  const auto top = static_cast<uint32_t>(PythonRound((resized->rows() - crop) / 2.0));
  const auto left = static_cast<uint32_t>(PythonRound((resized->cols() - crop) / 2.0));
  const auto size = static_cast<uint32_t>(crop);
  sftensor out = TensorCreate(chw.channels(), size, size);
  out->data() =
      resized->data().subcube(top, left, 0, top + size - 1, left + size - 1, chw.channels() - 1);
  return out;
}

sftensor ClassifyInput(const cv::Mat& rgb8, int crop) {
  const int resize = static_cast<int>(std::lround(crop / 0.875));
  sftensor x = ResizeCenterCrop(*RgbToTensor(rgb8), resize, crop);
  Normalize(*x, kImageNetMean, kImageNetStd);
  return x;
}

Letterboxed Letterbox(const cv::Mat& image, int size, double pad_value) {
  const int h = image.rows, w = image.cols;
  if (h <= 0 || w <= 0 || size <= 0) {
    throw ShapeError(fmt::format("cannot letterbox a {}x{} image into {}x{}", w, h, size, size));
  }
  Letterboxed out;
  const double scale = std::min(static_cast<double>(size) / h, static_cast<double>(size) / w);
  out.scale = static_cast<float>(scale);
  const int new_w = std::clamp(PythonRound(w * scale), 1, size);
  const int new_h = std::clamp(PythonRound(h * scale), 1, size);
  const double dw = (size - new_w) / 2.0, dh = (size - new_h) / 2.0;
  out.pad_top = PythonRound(dh - 0.1);
  out.pad_left = PythonRound(dw - 0.1);
  const int pad_bottom = size - new_h - out.pad_top;
  const int pad_right = size - new_w - out.pad_left;
  cv::Mat resized;
  if (new_w == w && new_h == h) {
    resized = image;
  } else {
    cv::resize(image, resized, cv::Size(new_w, new_h), 0, 0, cv::INTER_LINEAR);
  }
  cv::copyMakeBorder(resized, out.image, out.pad_top, pad_bottom, out.pad_left, pad_right,
                     cv::BORDER_CONSTANT, cv::Scalar::all(pad_value));
  return out;
}

}  // namespace kuiper::app
