// course2 stretch task: reflect padding. Expected values come from
// torch.nn.functional.pad(x, (left, right, top, bottom), mode="reflect"),
// written out here, and from a loop over the mirrored indices.
#include <gtest/gtest.h>

#include <string>

#include "kuiper/error.hpp"
#include "kuiper/tensor.hpp"

namespace kuiper::stretch {
// Defined in course2_padding/src/stretch_reflect_pad.cpp.
ftensor PadReflect(const ftensor& input, const std::vector<uint32_t>& pads);
}  // namespace kuiper::stretch

namespace kuiper {
namespace {

using stretch::PadReflect;

TEST(PadReflect, OneRowMirrorsAroundTheEndElements) {
  // torch: F.pad([[[[1, 2, 3]]]], (2, 2, 0, 0), mode="reflect") = 3 2 1 2 3 2 1
  ftensor t(1, 1, 3);
  t.Fill({1, 2, 3}, true);
  const ftensor out = PadReflect(t, {0, 0, 2, 2});
  EXPECT_EQ(out.raw_shapes(), std::vector<uint32_t>({1, 1, 7})) << "see README §10";
  EXPECT_EQ(out.values(true), std::vector<float>({3, 2, 1, 2, 3, 2, 1}))
      << "the end elements are mirrors, not repeated; see README §10";
}

TEST(PadReflect, TwoByThreeMatchesPyTorch) {
  // torch: F.pad(arange(1, 7).reshape(1, 1, 2, 3), (2, 1, 1, 1), mode="reflect")
  ftensor t(1, 2, 3);
  t.Fill({1, 2, 3, 4, 5, 6}, true);
  const ftensor out = PadReflect(t, {1, 1, 2, 1});
  EXPECT_EQ(out.raw_shapes(), std::vector<uint32_t>({1, 4, 6})) << "see README §10";
  EXPECT_EQ(out.values(true), std::vector<float>({6, 5, 4, 5, 6, 5,  //
                                                  3, 2, 1, 2, 3, 2,  //
                                                  6, 5, 4, 5, 6, 5,  //
                                                  3, 2, 1, 2, 3, 2}))
      << "see README §10";
}

TEST(PadReflect, EveryChannelIsPaddedOnItsOwn) {
  ftensor t(2, 2, 2);
  t.Fill({1, 2, 3, 4, 10, 20, 30, 40}, true);
  const ftensor out = PadReflect(t, {1, 0, 0, 1});
  EXPECT_EQ(out.raw_shapes(), std::vector<uint32_t>({2, 3, 3})) << "see README §10";
  EXPECT_EQ(out.values(true), std::vector<float>({3, 4, 3, 1, 2, 1, 3, 4, 3,  //
                                                  30, 40, 30, 10, 20, 10, 30, 40, 30}))
      << "see README §10";
}

TEST(PadReflect, OddShapeWithEveryAllowedPadMatchesMirroredIndices) {
  ftensor t(2, 3, 5);
  std::vector<float> v(30);
  for (size_t i = 0; i < v.size(); ++i) v[i] = float(i);
  t.Fill(v, true);
  const auto mirror = [](int i, int n) { return i < 0 ? -i : i >= n ? 2 * (n - 1) - i : i; };
  for (uint32_t top = 0; top < 3; ++top)
    for (uint32_t bottom = 0; bottom < 3; ++bottom)
      for (uint32_t left = 0; left < 5; left += 2)
        for (uint32_t right = 0; right < 5; right += 3) {
          const ftensor out = PadReflect(t, {top, bottom, left, right});
          const std::string pads = std::to_string(top) + "," + std::to_string(bottom) + "," +
                                   std::to_string(left) + "," + std::to_string(right);
          ASSERT_EQ(out.raw_shapes(),
                    std::vector<uint32_t>({2, 3 + top + bottom, 5 + left + right}))
              << pads << "; see README §10";
          for (uint32_t c = 0; c < 2; ++c)
            for (uint32_t r = 0; r < out.rows(); ++r)
              for (uint32_t k = 0; k < out.cols(); ++k)
                ASSERT_EQ(out.at(c, r, k),
                          t.at(c, mirror(int(r) - int(top), 3), mirror(int(k) - int(left), 5)))
                    << "pads " << pads << " at (" << c << ", " << r << ", " << k
                    << "); see README §10";
        }
}

TEST(PadReflect, PadAsLargeAsTheSizeThrows) {
  ftensor t(1, 2, 3);
  EXPECT_THROW(PadReflect(t, {2, 0, 0, 0}), ShapeError)
      << "top = rows has nothing to mirror; see README §10";
  EXPECT_THROW(PadReflect(t, {0, 0, 0, 3}), ShapeError)
      << "right = cols has nothing to mirror; see README §10";
}

TEST(PadReflect, WrongNumberOfPadsOrEmptyTensorThrows) {
  ftensor t(1, 2, 3);
  EXPECT_THROW(PadReflect(t, {1, 1, 1}), ShapeError) << "see README §10";
  EXPECT_THROW(PadReflect(ftensor(), {0, 0, 0, 0}), ShapeError) << "see README §10";
}

}  // namespace
}  // namespace kuiper
