// course2_padding: Tensor::Flatten. Expected orders are written out by hand or
// read element by element with at(channel, row, col).
#include <gtest/gtest.h>

#include <numeric>
#include <string>

#include "kuiper/error.hpp"
#include "kuiper/tensor.hpp"

namespace kuiper {
namespace {

// The elements of `t` in the order Flatten(row_major) must produce:
// channel, then row, then column (row-major), or channel, then column, then
// row (storage order), read one by one with at().
std::vector<float> NaiveOrder(const ftensor& t, bool row_major) {
  std::vector<float> order;
  for (uint32_t c = 0; c < t.channels(); ++c) {
    const uint32_t outer = row_major ? t.rows() : t.cols();
    const uint32_t inner = row_major ? t.cols() : t.rows();
    for (uint32_t a = 0; a < outer; ++a) {
      for (uint32_t b = 0; b < inner; ++b) {
        order.push_back(row_major ? t.at(c, a, b) : t.at(c, b, a));
      }
    }
  }
  return order;
}

// A flattened tensor is 1-D in both views: raw_shapes {n}, stored 1 x n x 1.
void ExpectOneDimensional(const ftensor& t, uint32_t n, const std::string& why) {
  EXPECT_EQ(t.raw_shapes(), std::vector<uint32_t>({n})) << why;
  EXPECT_EQ(t.rows(), 1u) << "a 1-D tensor is stored as one row; " << why;
  EXPECT_EQ(t.cols(), n) << "a 1-D tensor is stored as one row; " << why;
  EXPECT_EQ(t.channels(), 1u) << "a 1-D tensor is stored in one channel; " << why;
}

TEST(Flatten, RowMajorReadsChannelThenRowThenColumn) {
  ftensor t(2, 2, 3);
  t.Fill({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, /*row_major=*/true);
  t.Flatten(true);
  ExpectOneDimensional(t, 12, "see README §3.2 and §3.3");
  EXPECT_EQ(t.values(true), std::vector<float>({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}))
      << "see README §3.3 (row-major: channel, row, column)";
}

TEST(Flatten, ColumnMajorReadsStorageOrder) {
  ftensor t(2, 2, 3);
  t.Fill({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, /*row_major=*/true);
  t.Flatten(false);
  ExpectOneDimensional(t, 12, "see README §3.2 and §3.3");
  // Each channel column by column: [[0 1 2] [3 4 5]] -> 0 3 1 4 2 5.
  EXPECT_EQ(t.values(true), std::vector<float>({0, 3, 1, 4, 2, 5, 6, 9, 7, 10, 8, 11}))
      << "see README §3.3 (storage order: channel, column, row)";
}

TEST(Flatten, TwoDimensionalNonSquareRowMajor) {
  ftensor t(3, 2);
  t.Fill({1, 2, 3, 4, 5, 6}, true);
  t.Flatten(true);
  ExpectOneDimensional(t, 6, "see README §3.2");
  EXPECT_EQ(t.values(true), std::vector<float>({1, 2, 3, 4, 5, 6})) << "see README §3.3";
}

TEST(Flatten, TwoDimensionalNonSquareStorageOrder) {
  // [[1 2] [3 4] [5 6]] column by column: 1 3 5 2 4 6.
  ftensor t(3, 2);
  t.Fill({1, 2, 3, 4, 5, 6}, true);
  t.Flatten(false);
  ExpectOneDimensional(t, 6, "see README §3.2");
  EXPECT_EQ(t.values(true), std::vector<float>({1, 3, 5, 2, 4, 6})) << "see README §3.3";
}

TEST(Flatten, OneDimensionalIsUnchanged) {
  for (bool row_major : {true, false}) {
    ftensor t(4);
    t.Fill({4, 3, 2, 1}, true);
    t.Flatten(row_major);
    ExpectOneDimensional(t, 4, "see README §3.3 (for a 1-D tensor both orders agree)");
    EXPECT_EQ(t.values(true), std::vector<float>({4, 3, 2, 1}))
        << "row_major=" << row_major << "; see README §3.3";
  }
}

TEST(Flatten, TensorWithoutElementsBecomesOneDimensionalOfZero) {
  for (bool row_major : {true, false}) {
    ftensor t(2, 0, 3);  // 2 channels of 0 rows: no element at all
    t.Flatten(row_major);
    ExpectOneDimensional(t, 0,
                         std::string("row_major=") + (row_major ? "true" : "false") +
                             "; see README §3.3 (a tensor without elements is not an error)");
  }
}

TEST(Flatten, EveryShapeUpTo3x4x5InBothOrders) {
  for (bool row_major : {true, false}) {
    for (uint32_t c = 1; c <= 3; ++c) {
      for (uint32_t h = 1; h <= 4; ++h) {
        for (uint32_t w = 1; w <= 5; ++w) {
          ftensor t(c, h, w);
          std::vector<float> data(c * h * w);
          std::iota(data.begin(), data.end(), 0.f);
          t.Fill(data, true);
          const std::vector<float> expected = NaiveOrder(t, row_major);
          t.Flatten(row_major);
          const std::string shape = std::to_string(c) + "x" + std::to_string(h) + "x" +
                                    std::to_string(w) + (row_major ? " row-major" : " storage");
          ASSERT_EQ(t.raw_shapes(), std::vector<uint32_t>({c * h * w}))
              << shape << "; see README §3.2";
          EXPECT_EQ(t.values(true), expected) << shape << "; see README §3.1 and §3.3";
        }
      }
    }
  }
}

TEST(Flatten, FourToSevenDimensionalTensorsInBothOrders) {
  // N-D tensors fold their leading dimensions into the channels (README §3.2):
  // (2, 3, 2, 2) is 6 channels of 2x2. Flatten must count every channel the
  // storage has, not the channels a 3-D raw_shapes() would name.
  const std::vector<std::vector<uint32_t>> shapes = {
      {2, 3, 2, 2}, {2, 1, 3, 2, 3}, {1, 2, 2, 1, 2, 3}, {2, 1, 2, 1, 1, 3, 2}};
  for (const auto& shape : shapes) {
    for (bool row_major : {true, false}) {
      ftensor t(shape);
      std::vector<float> data(t.size());
      std::iota(data.begin(), data.end(), 0.f);
      t.Fill(data, true);
      const std::vector<float> expected = NaiveOrder(t, row_major);
      t.Flatten(row_major);
      const std::string why = std::to_string(shape.size()) + "-D tensor, " +
                              (row_major ? "row-major" : "storage order") +
                              "; see README §3.2 (4 to 7 dimensions)";
      ExpectOneDimensional(t, static_cast<uint32_t>(data.size()), why);
      EXPECT_EQ(t.values(true), expected) << why;
    }
  }
}

}  // namespace
}  // namespace kuiper
