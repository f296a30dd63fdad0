// RobustRelativeErrors (error_measures.hpp), the model checks' measure, against
// the same measure in NumPy (tools/fidelity.py's `errors`), computed on these
// values with /usr/bin/python3.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "error_measures.hpp"

namespace kuiper {
namespace {

// One kind: floor = 1e-3 * 4; e = {0.125 / 1.004, 0, 0, 0.00390625 / 0.004}.
// The 99.9th percentile lies 0.997 of the way from the 3rd to the 4th smallest.
TEST(RobustRelativeErrors, MatchNumpyOnOneKind) {
  const std::vector<double> ref = {1, -2, 4, 0};
  const std::vector<float> got = {1.125f, -2, 4, 0.00390625f};
  const RobustErrors e = RobustRelativeErrors(got, ref);
  EXPECT_NEAR(e.rms, 0.4922334462493773, 1e-12);
  EXPECT_NEAR(e.p999, 0.9740063184760959, 1e-12);
}

// Two kinds: 0.25's floor is 1e-3 of its kind's largest, 0.5, not of 100.
TEST(RobustRelativeErrors, FloorEachKindByItsOwnLargestValue) {
  const std::vector<double> ref = {100, 0.5, -50, 0.25};
  const std::vector<float> got = {101, 0.5, -50, 0.25048828125f};
  const RobustErrors e = RobustRelativeErrors(got, ref, {0, 1, 0, 1});
  EXPECT_NEAR(e.rms, 0.005089198948058113, 1e-12);
  EXPECT_NEAR(e.p999, 0.009965887639680681, 1e-12);
}

TEST(RobustRelativeErrors, NanIsAnInfiniteError) {
  const RobustErrors e =
      RobustRelativeErrors(std::vector<float>{1, NAN}, std::vector<double>{1, 1});
  EXPECT_EQ(e.rms, INFINITY);
  EXPECT_EQ(e.p999, INFINITY);
}

}  // namespace
}  // namespace kuiper
