// course2_padding hidden tests: Flatten of a tensor that has no shape at all.
#include <gtest/gtest.h>

#include <vector>

#include "kuiper/tensor.hpp"

namespace kuiper {
namespace {

TEST(HiddenFlatten, DefaultConstructedTensorFlattensToZeroElements) {
  // ftensor() has no dimensions and no element: like ftensor(2, 0, 3) it
  // becomes the 1-D tensor of 0 elements (README §3.3). Its element count is
  // size() = 0, not the product of an empty list of dimensions (1).
  for (bool row_major : {true, false}) {
    ftensor t;
    t.Flatten(row_major);
    EXPECT_EQ(t.raw_shapes(), std::vector<uint32_t>({0})) << "row_major=" << row_major;
    EXPECT_EQ(t.size(), 0u) << "row_major=" << row_major;
    EXPECT_EQ(t.rows(), 1u) << "stored 1 x 0 x 1; row_major=" << row_major;
    EXPECT_EQ(t.channels(), 1u) << "stored 1 x 0 x 1; row_major=" << row_major;
  }
}

}  // namespace
}  // namespace kuiper
