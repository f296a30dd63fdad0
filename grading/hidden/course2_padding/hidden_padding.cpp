// course2_padding hidden tests: Padding's errors where the public tests leave
// a gap: pads that overflow only when added together, tensors with channels
// but no elements, an empty tensor padded by zero.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "kuiper/error.hpp"
#include "kuiper/tensor.hpp"

namespace kuiper {
namespace {

TEST(HiddenPadding, PadsThatOverflowOnlyTogetherThrow) {
  // Each pad is 2^31, below UINT32_MAX - 3, but 3 + 2^31 + 2^31 = 2^32 + 3
  // wraps around to 3 in uint32_t: the sum is what must fit.
  const uint32_t half = uint32_t{1} << 31;
  ftensor tall(1, 3, 4);
  EXPECT_THROW(tall.Padding({half, half, 0, 0}, 0.f), ShapeError)
      << "rows + top + bottom = 2^32 + 3; see README §3.4 (errors)";
  ftensor wide(1, 3, 4);
  EXPECT_THROW(wide.Padding({0, 0, half, half}, 0.f), ShapeError)
      << "cols + left + right = 2^32 + 4; see README §3.4 (errors)";
}

TEST(HiddenPadding, TensorWithChannelsButNoRowsThrows) {
  // ftensor(2, 0, 3) has two channels and no element: it is empty().
  ftensor t(2, 0, 3);
  ASSERT_TRUE(t.empty());
  EXPECT_THROW(t.Padding({1, 1, 1, 1}, 0.f), ShapeError)
      << "a tensor without elements is empty; see README §3.4 (errors)";
}

TEST(HiddenPadding, TensorWithChannelsButNoColumnsThrows) {
  ftensor t(3, 2, 0);
  ASSERT_TRUE(t.empty());
  EXPECT_THROW(t.Padding({0, 0, 1, 1}, 0.f), ShapeError)
      << "a tensor without elements is empty; see README §3.4 (errors)";
}

TEST(HiddenPadding, EmptyTensorThrowsEvenForZeroPads) {
  // "Padding by zero leaves the tensor as it was" holds for a tensor that can
  // be padded; an empty one is refused whatever the pads.
  ftensor t;
  EXPECT_THROW(t.Padding({0, 0, 0, 0}, 0.f), ShapeError) << "see README §3.4 (errors)";
}

}  // namespace
}  // namespace kuiper
