// course1_tensor: Axby (y = w * x + b) and EPowerMinus (y = e^-x).
// References are plain loops over the definition (in double), or values
// worked out by hand, never the Armadillo expressions a solution would use.
// Every failure names the README section that explains the expectation.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>

#include "kuiper/axby.hpp"
#include "kuiper/error.hpp"

namespace kuiper {
namespace {

arma::fmat RandomMatrix(std::mt19937& rng, arma::uword rows, arma::uword cols) {
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  arma::fmat m(rows, cols);
  for (float& v : m) v = dist(rng);
  return m;
}

// y(i, j) = sum_t w(i, t) * x(t, j) + b(i, j), or b(i, 0) when b is one column.
arma::fmat NaiveAxby(const arma::fmat& x, const arma::fmat& w, const arma::fmat& b) {
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

// Compares shape, then every element; `why` points at the README section.
void ExpectNear(const arma::fmat& actual, const arma::fmat& expected, float tolerance,
                const std::string& why) {
  ASSERT_EQ(actual.n_rows, expected.n_rows) << "rows of the result; " << why;
  ASSERT_EQ(actual.n_cols, expected.n_cols) << "columns of the result; " << why;
  for (arma::uword i = 0; i < expected.n_elem; ++i) {
    EXPECT_NEAR(actual(i), expected(i), tolerance)
        << "at element " << i << " (row " << i % expected.n_rows << ", column "
        << i / expected.n_rows << "); " << why;
  }
}

// The ShapeError message of Axby(x, w, b, y), or "" when it does not throw one.
std::string ShapeErrorMessage(const arma::fmat& x, const arma::fmat& w, const arma::fmat& b) {
  arma::fmat y;
  try {
    Axby(x, w, b, y);
  } catch (const ShapeError& e) {
    return e.what();
  }
  return "";
}

TEST(Axby, HandComputedTwoByTwo) {
  const arma::fmat w = {{1, 2}, {3, 4}};
  const arma::fmat x = arma::fvec{5, 6};
  const arma::fmat b = arma::fvec{0.5f, -1};
  arma::fmat y;
  Axby(x, w, b, y);
  // [1*5 + 2*6 + 0.5, 3*5 + 4*6 - 1] = [17.5, 38]
  const arma::fmat expected = arma::fvec{17.5f, 38};
  ExpectNear(y, expected, 0.f, "see README §3.2 (the formula)");
}

TEST(Axby, HandoutWorkedExample) {
  const arma::fmat w = {{1, 0, 2}, {-1, 3, 1}};
  const arma::fmat x = {{1, 2}, {0, 1}, {3, -1}};
  const arma::fmat b = arma::fvec{10, 20};
  arma::fmat y;
  Axby(x, w, b, y);
  const arma::fmat expected = {{17, 10}, {22, 20}};
  ExpectNear(y, expected, 0.f, "see README §3.5 (the worked example, done by hand)");
}

TEST(Axby, FullBiasMatrix) {
  const arma::fmat w = {{1, 0, 2}};               // 1x3
  const arma::fmat x = {{1, 2}, {3, 4}, {5, 6}};  // 3x2
  const arma::fmat b = {{10, 20}};                // 1x2
  arma::fmat y;
  Axby(x, w, b, y);
  // [1 + 10 + 10, 2 + 12 + 20] = [21, 34]
  const arma::fmat expected = {{21, 34}};
  ExpectNear(y, expected, 0.f, "see README §3.3 (a full bias adds b(i, j) to y(i, j))");
}

TEST(Axby, ColumnBiasIsAddedToEveryColumn) {
  const arma::fmat w = {{1, 1}, {0, 2}};
  const arma::fmat x = {{1, 2, 3}, {4, 5, 6}};
  const arma::fmat b = arma::fvec{1, -1};
  arma::fmat y;
  Axby(x, w, b, y);
  const arma::fmat expected = {{6, 8, 10}, {7, 9, 11}};
  ExpectNear(y, expected, 0.f, "see README §3.3 (a one-column bias is broadcast)");
}

TEST(Axby, OneByOneBiasIsBroadcastOverAOneRowResult) {
  // m = 1: b is 1x1, and there are 4 columns to add it to.
  const arma::fmat w = {{2, -1}};
  const arma::fmat x = {{1, 2, 3, 4}, {1, 1, 1, 1}};
  const arma::fmat b(1, 1, arma::fill::value(0.5f));
  arma::fmat y;
  Axby(x, w, b, y);
  const arma::fmat expected = {{1.5f, 3.5f, 5.5f, 7.5f}};
  ExpectNear(y, expected, 0.f, "see README §3.3 (b with one column, whatever m is)");
}

TEST(Axby, OutputIsReplacedWhateverItHeld) {
  const arma::fmat w = {{1, 1}, {0, 2}};
  const arma::fmat x = {{1, 2, 3}, {4, 5, 6}};
  const arma::fmat b = arma::fvec{1, -1};
  arma::fmat y(5, 7, arma::fill::value(100.f));  // a previous result of another shape
  Axby(x, w, b, y);
  const arma::fmat expected = {{6, 8, 10}, {7, 9, 11}};
  ExpectNear(y, expected, 0.f, "see README §3.2 (y is only an output)");
}

TEST(Axby, OutputMayBeTheInput) {
  // Axby(x, w, b, x): every element of x is read by several outputs (w has no
  // zero), so x must be read completely before y is written.
  const arma::fmat w = {{1, 1}, {1, 2}};
  arma::fmat x = {{1, 2, 3}, {4, 5, 6}};
  const arma::fmat b = arma::fvec{1, -1};
  Axby(x, w, b, x);
  // Column j is [x(0, j) + x(1, j) + 1, x(0, j) + 2 x(1, j) - 1].
  const arma::fmat expected = {{6, 8, 10}, {8, 11, 14}};
  ExpectNear(x, expected, 0.f, "y may be x itself; see README §3.2 (y is only an output)");
}

TEST(Axby, OutputMayBeTheWeights) {
  // Axby(x, w, b, w): the result (2x2) has another shape than w (2x3), so
  // anything that sizes y before the product (y.set_size, y.zeros) reshapes
  // w while it is still to be read.
  arma::fmat w = {{1, 2, 3}, {-1, 0, 2}};
  const arma::fmat x = {{1, 0}, {0, 1}, {2, -1}};
  const arma::fmat b = arma::fvec{1, -1};
  const arma::fmat expected = NaiveAxby(x, w, b);  // {{8, 0}, {2, -3}}
  Axby(x, w, b, w);
  ExpectNear(w, expected, 0.f, "y may be w itself; see README §3.2 (y is only an output)");
}

TEST(Axby, RandomShapesMatchNaiveLoops) {
  std::mt19937 rng(2024);
  std::uniform_int_distribution<int> dim(1, 40);
  for (int trial = 0; trial < 20; ++trial) {
    const arma::uword m = dim(rng), k = dim(rng), n = dim(rng);
    const arma::fmat w = RandomMatrix(rng, m, k);
    const arma::fmat x = RandomMatrix(rng, k, n);
    const arma::fmat b = RandomMatrix(rng, m, trial % 2 ? n : 1);
    arma::fmat y;
    Axby(x, w, b, y);
    SCOPED_TRACE("m=" + std::to_string(m) + " k=" + std::to_string(k) + " n=" + std::to_string(n) +
                 (trial % 2 ? " full bias" : " column bias"));
    ExpectNear(y, NaiveAxby(x, w, b), 1e-4f, "see README §3.2 and §3.3");
  }
}

TEST(Axby, InnerDimensionMismatchThrowsShapeError) {
  arma::fmat y;
  EXPECT_THROW(Axby(arma::fmat(3, 2), arma::fmat(4, 2), arma::fmat(4, 2), y), ShapeError)
      << "w is 4x2 but x has 3 rows; see README §3.2 (shape rules)";
}

TEST(Axby, BiasRowsMismatchThrowsShapeError) {
  arma::fmat y;
  EXPECT_THROW(Axby(arma::fmat(2, 5), arma::fmat(4, 2), arma::fmat(3, 5), y), ShapeError)
      << "y has 4 rows but b has 3; see README §3.2 (shape rules)";
}

TEST(Axby, BiasColumnsMismatchThrowsShapeError) {
  arma::fmat y;
  EXPECT_THROW(Axby(arma::fmat(2, 5), arma::fmat(4, 2), arma::fmat(4, 3), y), ShapeError)
      << "y has 5 columns, b has 3 (neither 5 nor 1); see README §3.2 (shape rules)";
}

TEST(Axby, RowBiasIsNotBroadcast) {
  // A 1 x n bias for an m x n result with m > 1 is not one of the two allowed forms.
  arma::fmat y;
  EXPECT_THROW(Axby(arma::fmat(2, 5), arma::fmat(4, 2), arma::fmat(1, 5), y), ShapeError)
      << "b is 1x5 for a 4x5 result; only m x n or m x 1 are allowed; see README §3.2 and §3.3";
}

TEST(Axby, ShapeErrorMessageGivesEveryShape) {
  // x 3x5, w 4x2, b 4x5: the inner dimensions (2 and 3) disagree.
  const std::string what = ShapeErrorMessage(arma::fmat(3, 5), arma::fmat(4, 2), arma::fmat(4, 5));
  ASSERT_FALSE(what.empty()) << "expected a ShapeError; see README §3.2 (shape rules)";
  for (const char* shape : {"3x5", "4x2", "4x5"}) {
    EXPECT_NE(what.find(shape), std::string::npos)
        << "the message should give every shape as RxC, " << shape << " is missing from: " << what
        << "; see README §3.2 (shape rules)";
  }
}

TEST(EPowerMinus, HandComputedValues) {
  const arma::fmat x = {{0, 1}, {-1, 2}};
  arma::fmat y;
  EPowerMinus(x, y);
  // e^0 = 1, e^-1 = 0.36787944, e^1 = 2.7182817, e^-2 = 0.13533528
  const arma::fmat expected = {{1.f, 0.36787944f}, {2.7182817f, 0.13533528f}};
  ExpectNear(y, expected, 1e-6f, "see README §3.4 and §3.5");
}

TEST(EPowerMinus, RandomShapesMatchStdExp) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 10; ++trial) {
    const arma::fmat x = RandomMatrix(rng, 1 + trial * 3, 2 + trial) * 5.f;
    arma::fmat y(1, 1);  // any previous shape is replaced
    EPowerMinus(x, y);
    arma::fmat expected(x.n_rows, x.n_cols);
    for (arma::uword i = 0; i < x.n_elem; ++i) expected(i) = float(std::exp(-double(x(i))));
    ExpectNear(y, expected, 1e-5f * 150.f, "see README §3.4 (y takes x's shape)");
  }
}

TEST(EPowerMinus, WorksInPlace) {
  arma::fmat x = {{0, 1}, {-1, 2}};
  EPowerMinus(x, x);
  const arma::fmat expected = {{1.f, 0.36787944f}, {2.7182817f, 0.13533528f}};
  ExpectNear(x, expected, 1e-6f, "y may be x itself; see README §3.4");
}

TEST(EPowerMinus, LargePositiveInputsStayAboveZeroWhileAFloatCanHoldTheResult) {
  // e^-88 = 6.05e-39, e^-89 and e^-100 are all subnormal floats (below
  // FLT_MIN = 1.18e-38, the smallest normal one); e^-110 is below half the
  // smallest subnormal and rounds to 0. 1 / e^x gets
  // 0 from x = 88.73 on, because e^x is then infinite.
  const arma::fmat x = {{88.f, 89.f, 100.f, 110.f}};
  arma::fmat y;
  EPowerMinus(x, y);
  ASSERT_EQ(y.n_elem, 4u) << "see README §3.4";
  for (arma::uword i = 0; i < 3; ++i) {
    const float expected = float(std::exp(-double(x(i))));
    EXPECT_GT(y(i), 0.f) << "e^-" << x(i) << " is " << expected
                         << ", a (subnormal) float, not 0; see README §3.4 (the float range)";
    EXPECT_FLOAT_EQ(y(i), expected) << "e^-" << x(i) << "; see README §3.4 (the float range)";
  }
  EXPECT_EQ(y(3), 0.f) << "e^-110 is below every float; see README §3.4 (the float range)";
}

TEST(EPowerMinus, LargeNegativeInputsOverflowToInfinity) {
  const arma::fmat x = {{-88.f, -89.f, -1000.f}};
  arma::fmat y;
  EPowerMinus(x, y);
  ASSERT_EQ(y.n_elem, 3u) << "see README §3.4";
  EXPECT_FLOAT_EQ(y(0), float(std::exp(88.0)))
      << "e^88 = 1.65e38 still fits a float; see README §3.4";
  EXPECT_EQ(y(1), std::numeric_limits<float>::infinity())
      << "e^89 is above the largest float 3.4e38; see README §3.4 (the float range)";
  EXPECT_EQ(y(2), std::numeric_limits<float>::infinity()) << "see README §3.4 (the float range)";
}

TEST(EPowerMinus, ZeroSignedZeroAndNaN) {
  const arma::fmat x = {{0.f, -0.f, std::numeric_limits<float>::quiet_NaN()}};
  arma::fmat y;
  EPowerMinus(x, y);
  ASSERT_EQ(y.n_elem, 3u) << "see README §3.4";
  EXPECT_EQ(y(0), 1.f) << "e^0 = 1; see README §3.4";
  EXPECT_EQ(y(1), 1.f) << "e^-(-0) = 1; see README §3.4";
  EXPECT_TRUE(std::isnan(y(2))) << "NaN stays NaN; see README §3.4";
}

}  // namespace
}  // namespace kuiper
