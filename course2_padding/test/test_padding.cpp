// course2_padding: Tensor::Padding with pads = {top, bottom, left, right}.
// The reference builds the padded tensor element by element; the rank rules
// are spelt out case by case.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <string>

#include "kuiper/error.hpp"
#include "kuiper/tensor.hpp"

namespace kuiper {
namespace {

// out(c, r, k) = in(c, r - top, k - left) inside the original area, else value.
ftensor NaivePad(const ftensor& in, uint32_t top, uint32_t bottom, uint32_t left, uint32_t right,
                 float value) {
  ftensor out(in.channels(), in.rows() + top + bottom, in.cols() + left + right);
  for (uint32_t c = 0; c < out.channels(); ++c)
    for (uint32_t r = 0; r < out.rows(); ++r)
      for (uint32_t k = 0; k < out.cols(); ++k) {
        const bool inside = r >= top && r < top + in.rows() && k >= left && k < left + in.cols();
        out.at(c, r, k) = inside ? in.at(c, r - top, k - left) : value;
      }
  return out;
}

ftensor Counting(uint32_t c, uint32_t h, uint32_t w) {
  ftensor t(c, h, w);
  std::vector<float> v(c * h * w);
  for (size_t i = 0; i < v.size(); ++i) v[i] = float(i + 1);
  t.Fill(v, true);
  return t;
}

std::string PadsText(const std::vector<uint32_t>& pads) {
  return "pads {" + std::to_string(pads[0]) + ", " + std::to_string(pads[1]) + ", " +
         std::to_string(pads[2]) + ", " + std::to_string(pads[3]) + "}";
}

void ExpectPadded(const ftensor& original, const std::vector<uint32_t>& pads, float value) {
  ftensor t = original;
  t.Padding(pads, value);
  const ftensor expected = NaivePad(original, pads[0], pads[1], pads[2], pads[3], value);
  ASSERT_EQ(t.shapes(), expected.shapes()) << PadsText(pads) << "; see README §3.4";
  EXPECT_EQ(t.values(true), expected.values(true)) << PadsText(pads) << "; see README §3.4";
}

TEST(Padding, TopOnly) { ExpectPadded(Counting(2, 3, 4), {2, 0, 0, 0}, -1.f); }
TEST(Padding, BottomOnly) { ExpectPadded(Counting(2, 3, 4), {0, 2, 0, 0}, -1.f); }
TEST(Padding, LeftOnly) { ExpectPadded(Counting(2, 3, 4), {0, 0, 2, 0}, -1.f); }
TEST(Padding, RightOnly) { ExpectPadded(Counting(2, 3, 4), {0, 0, 0, 2}, -1.f); }
TEST(Padding, AllSidesDifferent) { ExpectPadded(Counting(2, 3, 4), {1, 2, 3, 4}, 7.5f); }
TEST(Padding, ZeroPaddingLeavesTensorUnchanged) {
  ExpectPadded(Counting(2, 3, 4), {0, 0, 0, 0}, 9.f);
}

TEST(Padding, NegativeInfinityAsMaxPoolingUsesIt) {
  ExpectPadded(Counting(3, 2, 2), {1, 1, 1, 1}, -std::numeric_limits<float>::infinity());
}

TEST(Padding, OddNonSquareShapeWithEveryCombinationOfPadsUpToTwo) {
  // 3 channels of 5 x 7: 81 combinations of {top, bottom, left, right} in 0..2.
  const ftensor original = Counting(3, 5, 7);
  for (uint32_t top = 0; top <= 2; ++top)
    for (uint32_t bottom = 0; bottom <= 2; ++bottom)
      for (uint32_t left = 0; left <= 2; ++left)
        for (uint32_t right = 0; right <= 2; ++right)
          ExpectPadded(original, {top, bottom, left, right}, 0.5f);
}

TEST(Padding, HandoutWorkedExample) {
  ftensor t(1, 2, 3);
  t.Fill({1, 2, 3, 4, 5, 6}, true);
  t.Padding({1, 0, 2, 1}, 0.f);
  EXPECT_EQ(t.raw_shapes(), std::vector<uint32_t>({1, 3, 6})) << "see README §3.4 and §3.5";
  EXPECT_EQ(t.values(true), std::vector<float>({0, 0, 0, 0, 0, 0,  //
                                                0, 0, 1, 2, 3, 0,  //
                                                0, 0, 4, 5, 6, 0}))
      << "see README §3.4 (the worked example)";
}

TEST(Padding, HandCheckedSmallCase) {
  ftensor t(1, 2);
  t.Fill({1, 2}, true);
  t.Padding({1, 0, 0, 1}, 0.f);
  // [[0 0 0]
  //  [1 2 0]]
  EXPECT_EQ(t.raw_shapes(), std::vector<uint32_t>({2, 3})) << "see README §3.5";
  EXPECT_EQ(t.values(true), std::vector<float>({0, 0, 0, 1, 2, 0})) << "see README §3.4";
}

TEST(Padding, RandomShapesAndPadsMatchNaiveLoops) {
  std::mt19937 rng(11);
  std::uniform_int_distribution<uint32_t> dim(1, 9), pad(0, 4);
  for (int trial = 0; trial < 30; ++trial) {
    const uint32_t c = dim(rng), h = dim(rng), w = dim(rng);
    ftensor original(c, h, w);
    original.Rand();
    const std::vector<uint32_t> pads = {pad(rng), pad(rng), pad(rng), pad(rng)};
    SCOPED_TRACE("trial " + std::to_string(trial) + ": " + std::to_string(c) + "x" +
                 std::to_string(h) + "x" + std::to_string(w));
    ExpectPadded(original, pads, -3.f);
  }
}

// ---- the rank rules of README §3.5 ----

TEST(Padding, ThreeDimensionalKeepsItsRank) {
  ftensor t = Counting(3, 2, 5);
  t.Padding({1, 1, 2, 2}, 0.f);
  EXPECT_EQ(t.raw_shapes(), std::vector<uint32_t>({3, 4, 9})) << "see README §3.5 (3-D stays 3-D)";
}

TEST(Padding, ThreeDimensionalWithOneChannelAndOneRowStaysThreeDimensional) {
  ftensor t(1, 1, 3);
  t.Fill({1, 2, 3}, true);
  t.Padding({0, 0, 1, 1}, 0.f);
  EXPECT_EQ(t.raw_shapes(), std::vector<uint32_t>({1, 1, 5}))
      << "a 3-D tensor stays 3-D even with one channel and one row; see README §3.5";
  EXPECT_EQ(t.values(true), std::vector<float>({0, 1, 2, 3, 0})) << "see README §3.4";
}

TEST(Padding, TwoDimensionalStaysTwoDimensional) {
  ftensor t(2, 3);
  t.Fill({1, 2, 3, 4, 5, 6}, true);
  t.Padding({1, 2, 0, 1}, 0.f);
  EXPECT_EQ(t.raw_shapes(), std::vector<uint32_t>({5, 4})) << "see README §3.5 (2-D stays 2-D)";
}

TEST(Padding, OneRowTwoDimensionalPaddedSidewaysStaysTwoDimensional) {
  ftensor t(1, 3);
  t.Fill({1, 2, 3}, true);
  t.Padding({0, 0, 1, 1}, 0.f);
  EXPECT_EQ(t.raw_shapes(), std::vector<uint32_t>({1, 5}))
      << "a 2-D tensor of one row stays 2-D, it does not become 1-D; see README §3.5";
  EXPECT_EQ(t.values(true), std::vector<float>({0, 1, 2, 3, 0})) << "see README §3.4";
}

TEST(Padding, OneDimensionalPaddedOnlySidewaysStaysOneDimensional) {
  ftensor t(3);
  t.Fill({1, 2, 3}, true);
  t.Padding({0, 0, 1, 2}, 0.f);
  EXPECT_EQ(t.raw_shapes(), std::vector<uint32_t>({6}))
      << "left/right padding of a 1-D tensor keeps one row; see README §3.5";
  EXPECT_EQ(t.values(true), std::vector<float>({0, 1, 2, 3, 0, 0})) << "see README §3.4";
}

TEST(Padding, OneDimensionalPaddedAtTheTopBecomesTwoDimensional) {
  ftensor t(3);
  t.Fill({1, 2, 3}, true);
  t.Padding({1, 0, 0, 0}, 0.f);
  EXPECT_EQ(t.raw_shapes(), std::vector<uint32_t>({2, 3}))
      << "a 1-D tensor with a second row is 2-D; see README §3.5";
  EXPECT_EQ(t.values(true), std::vector<float>({0, 0, 0, 1, 2, 3})) << "see README §3.4";
}

TEST(Padding, OneDimensionalPaddedAtTheBottomAndSidesBecomesTwoDimensional) {
  ftensor t(2);
  t.Fill({1, 2}, true);
  t.Padding({0, 1, 1, 0}, 9.f);
  EXPECT_EQ(t.raw_shapes(), std::vector<uint32_t>({2, 3})) << "see README §3.5";
  EXPECT_EQ(t.values(true), std::vector<float>({9, 1, 2, 9, 9, 9})) << "see README §3.4";
}

// ---- errors ----

TEST(Padding, WrongNumberOfPadsThrows) {
  ftensor t(1, 2, 2);
  EXPECT_THROW(t.Padding({1, 1, 1}, 0.f), ShapeError) << "see README §3.4 (errors)";
  EXPECT_THROW(t.Padding({1, 1, 1, 1, 1}, 0.f), ShapeError) << "see README §3.4 (errors)";
  EXPECT_THROW(t.Padding({}, 0.f), ShapeError) << "see README §3.4 (errors)";
}

TEST(Padding, PadsThatOverflowAUint32SizeThrow) {
  // 3 + 4294967294 + 2 rows and 4 + 1 + 4294967295 cols are both 2^32 + 3 or
  // more: in uint32_t they would wrap around to 3 and 4.
  ftensor tall(1, 3, 4);
  EXPECT_THROW(tall.Padding({UINT32_MAX - 1, 2, 0, 0}, 0.f), ShapeError)
      << "rows + top + bottom > UINT32_MAX; see README §3.4 (errors)";
  ftensor wide(1, 3, 4);
  EXPECT_THROW(wide.Padding({0, 0, 1, UINT32_MAX}, 0.f), ShapeError)
      << "cols + left + right > UINT32_MAX; see README §3.4 (errors)";
}

TEST(Padding, EmptyTensorThrows) {
  ftensor t;
  EXPECT_THROW(t.Padding({1, 1, 1, 1}, 0.f), ShapeError) << "see README §3.4 (errors)";
}

}  // namespace
}  // namespace kuiper
