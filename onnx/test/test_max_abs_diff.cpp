// MaxAbsDiff, the comparison every ONNX test (conformance, lowerings, models)
// passes or fails by: a NaN or a mismatched infinity must fail any tolerance.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "onnx_test_util.hpp"

namespace kuiper::testing {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
const float kNan = std::nanf("");

TEST(MaxAbsDiff, IsTheLargestElementDifference) {
  EXPECT_EQ(MaxAbsDiff({1, 2, 3}, {1, 2.5f, 2}), 1.f);
}

TEST(MaxAbsDiff, ANanOutputIsAnInfiniteDiffAndFails) {
  // The NaN comes after a real difference and before a zero one: neither may hide it.
  const float diff = MaxAbsDiff({1.5f, kNan, 3}, {1, 2, 3});
  EXPECT_EQ(diff, kInf);
  EXPECT_FALSE(diff <= 1e-5f);
}

TEST(MaxAbsDiff, ANanReferenceIsAnInfiniteDiff) { EXPECT_EQ(MaxAbsDiff({1, 2}, {1, kNan}), kInf); }

TEST(MaxAbsDiff, AnInfinityAgainstAFiniteValueIsAnInfiniteDiff) {
  EXPECT_EQ(MaxAbsDiff({kInf}, {1}), kInf);
}

TEST(MaxAbsDiff, OppositeInfinitiesAreAnInfiniteDiff) {
  EXPECT_EQ(MaxAbsDiff({-kInf}, {kInf}), kInf);
}

TEST(MaxAbsDiff, EqualInfinitiesMatch) {
  EXPECT_EQ(MaxAbsDiff({kInf, -kInf, 2}, {kInf, -kInf, 2}), 0.f);
}

}  // namespace
}  // namespace kuiper::testing
