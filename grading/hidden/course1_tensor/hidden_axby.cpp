// course1_tensor hidden tests: shape rules and aliasing the public tests leave
// open, and EPowerMinus at every step of the subnormal range and near the
// overflow edge. References: plain loops in double, or std::exp in double
// rounded once to float (the correctly rounded e^-x for these inputs).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "kuiper/axby.hpp"
#include "kuiper/error.hpp"

namespace kuiper {
namespace {

// y(i, j) = sum_t w(i, t) * x(t, j) + b(i, j), or b(i, 0) when b is one column.
arma::fmat HiddenNaiveAxby(const arma::fmat& x, const arma::fmat& w, const arma::fmat& b) {
  arma::fmat y(w.n_rows, x.n_cols);
  for (arma::uword i = 0; i < w.n_rows; ++i) {
    for (arma::uword j = 0; j < x.n_cols; ++j) {
      double sum = 0;
      for (arma::uword t = 0; t < w.n_cols; ++t) sum += double(w(i, t)) * x(t, j);
      y(i, j) = float(sum) + b(i, b.n_cols == 1 ? 0 : j);
    }
  }
  return y;
}

float HiddenExpMinus(float x) { return float(std::exp(-double(x))); }

TEST(HiddenAxby, OneByOneBiasIsNotBroadcastOverSeveralRows) {
  // b is 1x1 but the result is 3x4: b is neither m x n nor m x 1. A scalar
  // bias broadcast as in NumPy is not one of the two forms of README §3.3.
  arma::fmat y;
  EXPECT_THROW(Axby(arma::fmat(2, 4, arma::fill::ones), arma::fmat(3, 2, arma::fill::ones),
                    arma::fmat(1, 1, arma::fill::ones), y),
               ShapeError)
      << "b is 1x1 for a 3x4 result; see README §3.2 (shape rules)";
}

TEST(HiddenAxby, ColumnBiasWithTheWrongRowCountThrowsShapeError) {
  // The row rule holds for a one-column bias too, not only for a full one.
  arma::fmat y;
  EXPECT_THROW(Axby(arma::fmat(2, 5, arma::fill::ones), arma::fmat(4, 2, arma::fill::ones),
                    arma::fmat(3, 1, arma::fill::ones), y),
               ShapeError)
      << "b is 3x1 for a 4x5 result; see README §3.2 (shape rules)";
  EXPECT_THROW(Axby(arma::fmat(2, 5, arma::fill::ones), arma::fmat(4, 2, arma::fill::ones),
                    arma::fmat(6, 1, arma::fill::ones), y),
               ShapeError)
      << "b is 6x1 for a 4x5 result; see README §3.2 (shape rules)";
}

TEST(HiddenAxby, BiasShapeErrorMessageGivesEveryShape) {
  // x 2x5, w 4x2, b 3x5: the product is fine, the bias has 3 rows, not 4.
  arma::fmat y;
  std::string what;
  try {
    Axby(arma::fmat(2, 5, arma::fill::ones), arma::fmat(4, 2, arma::fill::ones),
         arma::fmat(3, 5, arma::fill::ones), y);
  } catch (const ShapeError& e) {
    what = e.what();
  }
  ASSERT_FALSE(what.empty()) << "expected a ShapeError; see README §3.2 (shape rules)";
  for (const char* shape : {"2x5", "4x2", "3x5"}) {
    EXPECT_NE(what.find(shape), std::string::npos)
        << "every ShapeError gives every shape as RxC, " << shape << " is missing from: " << what;
  }
}

TEST(HiddenAxby, OutputMayBeTheInputWhenTheResultHasAnotherShape) {
  // Axby(x, w, b, x) with w 3x2: x is 2x3, the result 3x3. Sizing y first
  // (set_size, zeros) reshapes x before it is read.
  const arma::fmat w = {{1, 2}, {-1, 1}, {0, 3}};
  arma::fmat x = {{1, 2, 3}, {4, 5, 6}};
  const arma::fmat b = arma::fvec{1, 0, -1};
  const arma::fmat expected = HiddenNaiveAxby(x, w, b);  // {{10,13,16},{4,4,4},{11,14,17}}
  Axby(x, w, b, x);
  ASSERT_EQ(x.n_rows, 3u);
  ASSERT_EQ(x.n_cols, 3u);
  for (arma::uword i = 0; i < expected.n_elem; ++i) {
    EXPECT_EQ(x(i), expected(i)) << "element " << i << "; y may be x itself (README §3.2)";
  }
}

TEST(HiddenEPowerMinus, SmallestSubnormalIsNotRoundedToZero) {
  // 2^-149 = 1.4e-45 is e^-103.28; anything above half of it (e^-103.97)
  // rounds up to it, not down to 0.
  const arma::fmat x = {{103.f, 103.3f, 103.5f, 103.9f, 104.f}};
  arma::fmat y;
  EPowerMinus(x, y);
  ASSERT_EQ(y.n_elem, 5u);
  const float smallest = std::numeric_limits<float>::denorm_min();
  for (arma::uword i = 0; i < 4; ++i) {
    EXPECT_EQ(y(i), smallest) << "e^-" << x(i) << " rounds to the smallest subnormal float";
  }
  EXPECT_EQ(y(4), 0.f) << "e^-104 is below half the smallest subnormal";
}

TEST(HiddenEPowerMinus, ExactAcrossTheSubnormalRange) {
  // Every x = 87 + i/16 up to 104: e^-x runs from the normal floats through
  // all the subnormals to 0. A subnormal has few significant bits, so the
  // correctly rounded value is expected exactly.
  arma::fmat x(1, 17 * 16 + 1);
  for (arma::uword i = 0; i < x.n_elem; ++i) x(i) = 87.f + float(i) / 16.f;
  arma::fmat y;
  EPowerMinus(x, y);
  ASSERT_EQ(y.n_elem, x.n_elem);
  for (arma::uword i = 0; i < x.n_elem; ++i) {
    const float expected = HiddenExpMinus(x(i));
    if (expected < std::numeric_limits<float>::min()) {
      EXPECT_EQ(y(i), expected) << "e^-" << x(i) << "; see README §3.4 (the float range)";
    } else {
      EXPECT_FLOAT_EQ(y(i), expected) << "e^-" << x(i) << "; see README §3.4 (the float range)";
    }
  }
}

TEST(HiddenEPowerMinus, FiniteUpToTheOverflowEdge) {
  // ln(FLT_MAX) = 88.7228: e^88.71 = 3.35e38 and e^88.72 = 3.39e38 are still
  // floats, below FLT_MAX = 3.40e38; only from e^88.7229 on is it infinity.
  const arma::fmat x = {{-88.5f, -88.7f, -88.71f, -88.72f}};
  arma::fmat y;
  EPowerMinus(x, y);
  ASSERT_EQ(y.n_elem, 4u);
  for (arma::uword i = 0; i < x.n_elem; ++i) {
    EXPECT_TRUE(std::isfinite(y(i))) << "e^" << -x(i) << " fits a float; see README §3.4";
    EXPECT_FLOAT_EQ(y(i), HiddenExpMinus(x(i))) << "e^" << -x(i) << "; see README §3.4";
  }
}

}  // namespace
}  // namespace kuiper
