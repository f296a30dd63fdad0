// course2_padding: Tensor::Padding with pads = {top, bottom, left, right}.
// The reference builds the padded tensor element by element.
#include <gtest/gtest.h>

#include <random>

#include "kuiper/error.hpp"
#include "kuiper/tensor.hpp"

namespace kuiper {
namespace {

// out(c, r, k) = in(c, r - top, k - left) inside the original area, else value.
ftensor NaivePad(const ftensor& in, uint32_t top, uint32_t bottom, uint32_t left,
                 uint32_t right, float value) {
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

void ExpectPadded(const std::vector<uint32_t>& pads, float value) {
  const ftensor original = Counting(2, 3, 4);
  ftensor t = original;
  t.Padding(pads, value);
  const ftensor expected = NaivePad(original, pads[0], pads[1], pads[2], pads[3], value);
  EXPECT_EQ(t.shapes(), expected.shapes());
  EXPECT_EQ(t.values(true), expected.values(true));
}

TEST(Padding, TopOnly) { ExpectPadded({2, 0, 0, 0}, -1.f); }
TEST(Padding, BottomOnly) { ExpectPadded({0, 2, 0, 0}, -1.f); }
TEST(Padding, LeftOnly) { ExpectPadded({0, 0, 2, 0}, -1.f); }
TEST(Padding, RightOnly) { ExpectPadded({0, 0, 0, 2}, -1.f); }
TEST(Padding, AllSidesDifferent) { ExpectPadded({1, 2, 3, 4}, 7.5f); }
TEST(Padding, ZeroPaddingLeavesTensorUnchanged) { ExpectPadded({0, 0, 0, 0}, 9.f); }

TEST(Padding, HandCheckedSmallCase) {
  ftensor t(1, 2);
  t.Fill({1, 2}, true);
  t.Padding({1, 0, 0, 1}, 0.f);
  // [[0 0 0]
  //  [1 2 0]]
  EXPECT_EQ(t.raw_shapes(), std::vector<uint32_t>({2, 3}));
  EXPECT_EQ(t.values(true), std::vector<float>({0, 0, 0, 1, 2, 0}));
}

TEST(Padding, ThreeDimensionalKeepsItsRank) {
  ftensor t = Counting(3, 2, 5);
  t.Padding({1, 1, 2, 2}, 0.f);
  EXPECT_EQ(t.raw_shapes(), std::vector<uint32_t>({3, 4, 9}));
}

TEST(Padding, OneDimensionalPaddedOnlySidewaysStaysOneDimensional) {
  ftensor t(3);
  t.Fill({1, 2, 3}, true);
  t.Padding({0, 0, 1, 2}, 0.f);
  EXPECT_EQ(t.raw_shapes(), std::vector<uint32_t>({6}));
  EXPECT_EQ(t.values(true), std::vector<float>({0, 1, 2, 3, 0, 0}));
}

TEST(Padding, RandomShapesAndPadsMatchNaiveLoops) {
  std::mt19937 rng(11);
  std::uniform_int_distribution<uint32_t> dim(1, 9), pad(0, 4);
  for (int trial = 0; trial < 30; ++trial) {
    const uint32_t c = dim(rng), h = dim(rng), w = dim(rng);
    ftensor original(c, h, w);
    original.Rand();
    const std::vector<uint32_t> pads = {pad(rng), pad(rng), pad(rng), pad(rng)};
    ftensor t = original;
    t.Padding(pads, -3.f);
    const ftensor expected = NaivePad(original, pads[0], pads[1], pads[2], pads[3], -3.f);
    ASSERT_EQ(t.shapes(), expected.shapes()) << "trial " << trial;
    EXPECT_EQ(t.values(true), expected.values(true)) << "trial " << trial;
  }
}

TEST(Padding, WrongNumberOfPadsThrows) {
  ftensor t(1, 2, 2);
  EXPECT_THROW(t.Padding({1, 1, 1}, 0.f), ShapeError);
  EXPECT_THROW(t.Padding({1, 1, 1, 1, 1}, 0.f), ShapeError);
}

TEST(Padding, EmptyTensorThrows) {
  ftensor t;
  EXPECT_THROW(t.Padding({1, 1, 1, 1}, 0.f), ShapeError);
}

}  // namespace
}  // namespace kuiper
