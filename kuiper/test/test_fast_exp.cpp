// FastExp (fast_exp.hpp) against the double-precision exponential.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "kuiper/fast_exp.hpp"

namespace kuiper {
namespace {

// One unit in the last place of a float near 1: 2^-23.
constexpr double kUlp = 1.0 / (1 << 23);

TEST(FastExp, WithinTwoUlpOfExpOverTheWholeRange) {
  double worst = 0, worst_x = 0;
  for (double x = -87.3; x <= 88.3; x += 1e-4) {
    const double exact = std::exp(double(float(x)));
    const double error = std::abs(FastExp(float(x)) - exact) / exact;
    if (error > worst) worst = error, worst_x = x;
  }
  EXPECT_LE(worst, 2 * kUlp) << "worst relative error at x = " << worst_x;
}

TEST(FastExp, ExactAtZeroAndOne) {
  EXPECT_EQ(FastExp(0.f), 1.f);
  EXPECT_NEAR(FastExp(1.f), 2.718281828, 2.718281828 * kUlp);
}

TEST(FastExp, ClampsInsteadOfOverflowing) {
  // Beyond the range the result stays finite and positive: SiLU's
  // x / (1 + e^-x) then tends to 0 (x very negative) or x (very positive).
  EXPECT_TRUE(std::isfinite(FastExp(1000.f)));
  EXPECT_GT(FastExp(1000.f), 1e38f);
  EXPECT_GT(FastExp(-1000.f), 0.f);
  EXPECT_LT(FastExp(-1000.f), 1.2e-38f);
}

TEST(FastExp, NanStaysNan) {
  EXPECT_TRUE(std::isnan(FastExp(std::numeric_limits<float>::quiet_NaN())));
}

}  // namespace
}  // namespace kuiper
