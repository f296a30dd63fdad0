// course2_padding: Tensor::Flatten. Expected orders are written out by hand.
#include <gtest/gtest.h>

#include <numeric>

#include "kuiper/error.hpp"
#include "kuiper/tensor.hpp"

namespace kuiper {
namespace {

TEST(Flatten, RowMajorReadsChannelThenRowThenColumn) {
  ftensor t(2, 2, 3);
  t.Fill({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, /*row_major=*/true);
  t.Flatten(true);
  EXPECT_EQ(t.raw_shapes(), std::vector<uint32_t>({12}));
  EXPECT_EQ(t.values(true), std::vector<float>({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}));
}

TEST(Flatten, ColumnMajorReadsStorageOrder) {
  ftensor t(2, 2, 3);
  t.Fill({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, /*row_major=*/true);
  t.Flatten(false);
  EXPECT_EQ(t.raw_shapes(), std::vector<uint32_t>({12}));
  // Each channel column by column: [[0 1 2] [3 4 5]] -> 0 3 1 4 2 5.
  EXPECT_EQ(t.values(true), std::vector<float>({0, 3, 1, 4, 2, 5, 6, 9, 7, 10, 8, 11}));
}

TEST(Flatten, TwoDimensionalNonSquare) {
  ftensor t(3, 2);
  t.Fill({1, 2, 3, 4, 5, 6}, true);
  t.Flatten(true);
  EXPECT_EQ(t.rows(), 1u);
  EXPECT_EQ(t.cols(), 6u);
  EXPECT_EQ(t.channels(), 1u);
  EXPECT_EQ(t.values(true), std::vector<float>({1, 2, 3, 4, 5, 6}));
}

TEST(Flatten, OneDimensionalIsUnchanged) {
  ftensor t(4);
  t.Fill({4, 3, 2, 1}, true);
  t.Flatten(true);
  EXPECT_EQ(t.raw_shapes(), std::vector<uint32_t>({4}));
  EXPECT_EQ(t.values(true), std::vector<float>({4, 3, 2, 1}));
}

TEST(Flatten, RandomShapesMatchNaiveOrder) {
  for (uint32_t c = 1; c <= 3; ++c) {
    for (uint32_t h = 1; h <= 4; ++h) {
      for (uint32_t w = 1; w <= 5; w += 2) {
        ftensor t(c, h, w);
        std::vector<float> data(c * h * w);
        std::iota(data.begin(), data.end(), 0.f);
        t.Fill(data, true);
        t.Flatten(false);
        // Column-major: index c*h*w-block + col*h + row holds the value row*w + col.
        std::vector<float> expected;
        for (uint32_t ch = 0; ch < c; ++ch)
          for (uint32_t col = 0; col < w; ++col)
            for (uint32_t row = 0; row < h; ++row)
              expected.push_back(float(ch * h * w + row * w + col));
        EXPECT_EQ(t.values(true), expected) << c << "x" << h << "x" << w;
      }
    }
  }
}

}  // namespace
}  // namespace kuiper
