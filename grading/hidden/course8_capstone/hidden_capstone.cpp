// course8_capstone hidden tests: behaviours the public tests leave open, each
// failing on one wrong solution kept in grading/wrong/course8_capstone/ that
// passes every public test. Expected values by hand, in the comments.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "kuiper/vision.hpp"

namespace kuiper {
namespace {

TEST(HiddenDecode, NanScoreIsNeverKept) {
  // A NaN objectness (a broken head) makes a NaN score, which is not above any threshold.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(DecodeYolo({10, 10, 4, 4, nan, 0.9f}, 6, 0.25f).empty());
}

TEST(HiddenDecode, EqualClassScoresPickTheFirstClass) {
  // Classes 1 and 2 tie at 0.7: the first of them, as argmax does.
  const std::vector<Detection> d = DecodeYolo({10, 10, 4, 4, 1, 0.1f, 0.7f, 0.7f}, 8, 0.25f);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].class_id, 1);
}

TEST(HiddenNms, IoUExactlyAtTheThresholdKeepsBoth) {
  // [0,0,10,10] and [0,0,10,5]: 50 / 100 = 0.5 exactly; only IoU > 0.5 suppresses.
  const std::vector<Detection> kept =
      Nms({{{0, 0, 10, 10}, 0, 0.9f}, {{0, 0, 10, 5}, 0, 0.8f}}, 0.5f);
  EXPECT_EQ(kept.size(), 2u);
}

TEST(HiddenNms, EqualScoresKeepTheirInputOrder) {
  // 40 disjoint boxes of one score: nothing is suppressed, and equal scores keep the
  // order they came in (the header's promise; std::sort may shuffle them, stable_sort not).
  std::vector<Detection> all;
  for (int i = 0; i < 40; ++i) {
    const auto x = static_cast<float>(20 * i);
    all.push_back({{x, 0, x + 10, 10}, i % 3, 0.5f});
  }
  const std::vector<Detection> kept = Nms(all, 0.45f);
  ASSERT_EQ(kept.size(), all.size());
  for (size_t i = 0; i < kept.size(); ++i) EXPECT_EQ(kept[i].box.x1, all[i].box.x1) << i;
}

TEST(HiddenLetterbox, FarCornersClipToTheImageSize) {
  // Corners are continuous coordinates: the far edge of a 1280x720 image is x = 1280,
  // y = 720, not the last pixel's index.
  const Box b = UnLetterbox({600, 300, 700, 600}, 0.5f, 0, 140, 1280, 720);
  EXPECT_FLOAT_EQ(b.x2, 1280);
  EXPECT_FLOAT_EQ(b.y2, 720);
}

TEST(HiddenResize, NonSquareResizeUsesEachAxisOwnScale) {
  // 2 rows x 4 columns -> 4 rows x 2 columns. Rows: (y + 0.5) / 2 - 0.5 -> 0, 0.25, 0.75,
  // 1 (clamped); columns: (x + 0.5) * 2 - 0.5 -> 0.5, 2.5. Input v(y, x) = 10y + x, so
  // out(y, x) = 10 * {0, 0.25, 0.75, 1}[y] + {0.5, 2.5}[x].
  sftensor in = TensorCreate(1, 2, 4);
  for (uint32_t y = 0; y < 2; ++y) {
    for (uint32_t x = 0; x < 4; ++x) in->at(0, y, x) = static_cast<float>(10 * y + x);
  }
  const sftensor out = ResizeBilinear(*in, 4, 2);
  ASSERT_EQ(out->raw_shapes(), (std::vector<uint32_t>{1, 4, 2}));
  const float rows[] = {0, 2.5f, 7.5f, 10}, cols[] = {0.5f, 2.5f};
  for (uint32_t y = 0; y < 4; ++y) {
    for (uint32_t x = 0; x < 2; ++x) {
      EXPECT_NEAR(out->at(0, y, x), rows[y] + cols[x], 1e-5f) << "row " << y << ", column " << x;
    }
  }
}

TEST(HiddenLayout, NonSquareImageWalksRowsOfColsPixels) {
  // 2 rows x 3 columns, pixel (y, x) has bytes 10 * (3y + x) + {0, 1, 2}: pixel (1, 0) is
  // the fourth, bytes 30, 31, 32.
  std::vector<uint8_t> bytes;
  for (int p = 0; p < 6; ++p) {
    for (int k = 0; k < 3; ++k) bytes.push_back(static_cast<uint8_t>(10 * p + k));
  }
  const sftensor t = ImageToChw(bytes, 2, 3, PixelOrder::kRgb);
  ASSERT_EQ(t->raw_shapes(), (std::vector<uint32_t>{3, 2, 3}));
  EXPECT_FLOAT_EQ(t->at(0, 1, 0), 30.f / 255.f);
  EXPECT_FLOAT_EQ(t->at(2, 1, 2), 52.f / 255.f);
}

}  // namespace
}  // namespace kuiper
