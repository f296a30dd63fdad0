// course8_capstone, part 1: ImageToChw, ResizeBilinear and Normalize (kuiper/vision.hpp).
// Every expected value is worked out by hand in the comments (README "Bilinear resize"
// shows the 2x2 -> 4x4 case step by step); PyTorch's interpolate(mode="bilinear",
// align_corners=False) gives the same numbers.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>

#include "kuiper/error.hpp"
#include "kuiper/vision.hpp"

namespace kuiper {
namespace {

// A 2x2 image whose pixel (y, x) holds the bytes 10 * (2y + x) + {1, 2, 3}.
std::vector<uint8_t> TwoByTwoBytes() { return {1, 2, 3, 11, 12, 13, 21, 22, 23, 31, 32, 33}; }

// One channel per entry of `planes`, each rows x cols, given row by row.
sftensor Planes(uint32_t rows, uint32_t cols, const std::vector<std::vector<float>>& planes) {
  sftensor t = TensorCreate(static_cast<uint32_t>(planes.size()), rows, cols);
  for (uint32_t c = 0; c < planes.size(); ++c) {
    for (uint32_t row = 0; row < rows; ++row) {
      for (uint32_t col = 0; col < cols; ++col) t->at(c, row, col) = planes[c][row * cols + col];
    }
  }
  return t;
}

void ExpectPlane(const Tensor<float>& t, uint32_t c, const std::vector<float>& want) {
  ASSERT_EQ(static_cast<size_t>(t.rows()) * t.cols(), want.size());
  for (uint32_t y = 0; y < t.rows(); ++y) {
    for (uint32_t x = 0; x < t.cols(); ++x) {
      EXPECT_NEAR(t.at(c, y, x), want[y * t.cols() + x], 1e-5f)
          << "channel " << c << ", row " << y << ", column " << x;
    }
  }
}

// ---- ImageToChw ----

TEST(ImageToChw, RgbBytesBecomeRgbPlanesOver255) {
  const sftensor t = ImageToChw(TwoByTwoBytes(), 2, 2, PixelOrder::kRgb);
  ASSERT_EQ(t->raw_shapes(), (std::vector<uint32_t>{3, 2, 2}));
  for (uint32_t plane = 0; plane < 3; ++plane) {
    // Pixel (1, 0) is the third: bytes 21, 22, 23.
    EXPECT_FLOAT_EQ(t->at(plane, 1, 0), static_cast<float>(21 + plane) / 255.f) << plane;
    EXPECT_FLOAT_EQ(t->at(plane, 0, 1), static_cast<float>(11 + plane) / 255.f) << plane;
  }
}

TEST(ImageToChw, BgrBytesAreSwappedIntoRgbPlanes) {
  // Red is the third byte of a BGR pixel: plane 0 of pixel (1, 1) is 33 / 255.
  const sftensor t = ImageToChw(TwoByTwoBytes(), 2, 2, PixelOrder::kBgr);
  EXPECT_FLOAT_EQ(t->at(0, 1, 1), 33.f / 255.f);
  EXPECT_FLOAT_EQ(t->at(1, 1, 1), 32.f / 255.f);
  EXPECT_FLOAT_EQ(t->at(2, 1, 1), 31.f / 255.f);
}

TEST(ImageToChw, WhiteIsOneAndBlackIsZero) {
  const sftensor t = ImageToChw({0, 0, 0, 255, 255, 255}, 1, 2, PixelOrder::kRgb);
  EXPECT_EQ(t->at(1, 0, 0), 0.f);
  EXPECT_EQ(t->at(1, 0, 1), 1.f);
}

TEST(ImageToChw, WrongByteCountThrowsShapeError) {
  EXPECT_THROW(ImageToChw(std::vector<uint8_t>(11), 2, 2, PixelOrder::kRgb), ShapeError);
}

TEST(ImageToChw, EmptyImageThrowsShapeError) {
  EXPECT_THROW(ImageToChw({}, 0, 0, PixelOrder::kRgb), ShapeError);
}

// ---- ResizeBilinear ----

TEST(ResizeBilinear, UpscaleTwoByTwoToFourByFourByHand) {
  // Output x samples the input at (x + 0.5) / 2 - 0.5 = -0.25, 0.25, 0.75, 1.25, clamped
  // to [0, 1]: 0, 0.25, 0.75, 1. Along the row (0, 4): 0, 1, 3, 4; down the column
  // (0, 8): 0, 2, 6, 8; the plane is their sum.
  const sftensor t = ResizeBilinear(*Planes(2, 2, {{0, 4, 8, 12}}), 4, 4);
  ASSERT_EQ(t->raw_shapes(), (std::vector<uint32_t>{1, 4, 4}));
  ExpectPlane(*t, 0, {0, 1, 3, 4, 2, 3, 5, 6, 6, 7, 9, 10, 8, 9, 11, 12});
}

TEST(ResizeBilinear, DownscaleByTwoAveragesEachTwoByTwoBlock) {
  // (x + 0.5) * 2 - 0.5 = 2x + 0.5: halfway between input pixels 2x and 2x + 1.
  // Input v(y, x) = 4y + x, so out(y, x) = 4 (2y + 0.5) + 2x + 0.5.
  const sftensor t =
      ResizeBilinear(*Planes(4, 4, {{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}}), 2, 2);
  ExpectPlane(*t, 0, {2.5f, 4.5f, 10.5f, 12.5f});
}

TEST(ResizeBilinear, SameSizeKeepsEveryValue) {
  const std::vector<float> plane = {3, -1, 7, 0.5f, 2, 9, -4, 6, 1};
  ExpectPlane(*ResizeBilinear(*Planes(3, 3, {plane}), 3, 3), 0, plane);
}

TEST(ResizeBilinear, EveryChannelIsResized) {
  // Channel 1 is 100 minus channel 0, so its result is 100 minus channel 0's.
  const sftensor t = ResizeBilinear(*Planes(2, 2, {{0, 4, 8, 12}, {100, 96, 92, 88}}), 4, 4);
  ASSERT_EQ(t->channels(), 2u);
  ExpectPlane(*t, 1, {100, 99, 97, 96, 98, 97, 95, 94, 94, 93, 91, 90, 92, 91, 89, 88});
}

TEST(ResizeBilinear, WeightIsThePositionRoundedToFloatMinusItsFloor) {
  // The classifier was trained on OpenCV's resize, which rounds each sample position to
  // float once and takes the weight from that float. At positions near 1000 a float
  // steps by 6.1e-5, so a weight taken from the double position instead differs by up
  // to that much, and the end-to-end test of the classifier's input fails. Columns of
  // 0, 1, 0, 1, ... (every row alike) make each output its column weight f (between a 0
  // and a 1) or 1 - f, whatever the row weights.
  constexpr uint32_t kIn = 1000, kOut = 777;
  std::vector<float> plane(kIn * kIn);
  for (uint32_t i = 0; i < plane.size(); ++i) plane[i] = static_cast<float>(i % kIn % 2);
  const sftensor t = ResizeBilinear(*Planes(kIn, kIn, {plane}), kOut, kOut);
  ASSERT_EQ(t->raw_shapes(), (std::vector<uint32_t>{1, kOut, kOut}));
  for (uint32_t x = 0; x < kOut; ++x) {
    const auto position = static_cast<float>(std::max(0.0, (x + 0.5) * kIn / kOut - 0.5));
    const auto left = static_cast<uint32_t>(position);  // below kIn - 1 for every x here
    const float weight = position - static_cast<float>(left);
    const float want = left % 2 == 0 ? weight : 1.f - weight;
    // Within 1e-6: mixing two equal rows may round once more (a few 1e-7); a weight from
    // the double position is off by up to 6.1e-5.
    for (uint32_t y : {0u, 388u, kOut - 1}) {
      ASSERT_NEAR(t->at(0, y, x), want, 1e-6f)
          << "row " << y << ", column " << x << ", position " << position;
    }
  }
}

TEST(ResizeBilinear, ZeroSizeThrowsShapeError) {
  EXPECT_THROW(ResizeBilinear(*Planes(2, 2, {{0, 1, 2, 3}}), 0, 4), ShapeError);
}

// ---- Normalize ----

TEST(Normalize, EachChannelUsesItsOwnMeanAndStd) {
  sftensor t = Planes(1, 2, {{0.1f, 1.f}, {0.5f, 0.f}, {0.9f, 0.25f}});
  Normalize(*t, {0.485f, 0.456f, 0.406f}, {0.229f, 0.224f, 0.225f});
  EXPECT_FLOAT_EQ(t->at(0, 0, 0), (0.1f - 0.485f) / 0.229f);
  EXPECT_FLOAT_EQ(t->at(0, 0, 1), (1.f - 0.485f) / 0.229f);
  EXPECT_FLOAT_EQ(t->at(1, 0, 0), (0.5f - 0.456f) / 0.224f);
  EXPECT_FLOAT_EQ(t->at(2, 0, 1), (0.25f - 0.406f) / 0.225f);
}

TEST(Normalize, MeanZeroAndStdOneChangeNothing) {
  sftensor t = Planes(1, 1, {{0.3f}, {0.6f}, {0.9f}});
  Normalize(*t, {0, 0, 0}, {1, 1, 1});
  EXPECT_FLOAT_EQ(t->at(2, 0, 0), 0.9f);
}

TEST(Normalize, TensorWithoutThreeChannelsThrowsShapeError) {
  sftensor t = Planes(1, 1, {{0.3f}, {0.6f}});
  EXPECT_THROW(Normalize(*t, {0, 0, 0}, {1, 1, 1}), ShapeError);
}

}  // namespace
}  // namespace kuiper
