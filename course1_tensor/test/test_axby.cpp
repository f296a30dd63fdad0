// course1_tensor: Axby (y = w * x + b) and EPowerMinus (y = e^-x).
// References are plain loops over the definition, not Armadillo expressions.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

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

// y(i, j) = sum_k w(i, k) * x(k, j) + b(i, j or 0).
arma::fmat NaiveAxby(const arma::fmat& x, const arma::fmat& w, const arma::fmat& b) {
  arma::fmat y(w.n_rows, x.n_cols);
  for (arma::uword i = 0; i < w.n_rows; ++i) {
    for (arma::uword j = 0; j < x.n_cols; ++j) {
      double sum = 0;
      for (arma::uword k = 0; k < w.n_cols; ++k) sum += double(w(i, k)) * x(k, j);
      y(i, j) = float(sum) + b(i, b.n_cols == 1 ? 0 : j);
    }
  }
  return y;
}

void ExpectNear(const arma::fmat& actual, const arma::fmat& expected, float tolerance) {
  ASSERT_EQ(actual.n_rows, expected.n_rows);
  ASSERT_EQ(actual.n_cols, expected.n_cols);
  for (arma::uword i = 0; i < expected.n_elem; ++i) {
    EXPECT_NEAR(actual(i), expected(i), tolerance) << "at element " << i;
  }
}

TEST(Axby, HandComputedTwoByTwo) {
  const arma::fmat w = {{1, 2}, {3, 4}};
  const arma::fmat x = arma::fvec{5, 6};
  const arma::fmat b = arma::fvec{0.5f, -1};
  arma::fmat y;
  Axby(x, w, b, y);
  // [1*5 + 2*6 + 0.5, 3*5 + 4*6 - 1] = [17.5, 38]
  const arma::fmat expected = arma::fvec{17.5f, 38};
  ExpectNear(y, expected, 0.f);
}

TEST(Axby, FullBiasMatrix) {
  const arma::fmat w = {{1, 0, 2}};          // 1x3
  const arma::fmat x = {{1, 2}, {3, 4}, {5, 6}};  // 3x2
  const arma::fmat b = {{10, 20}};           // 1x2
  arma::fmat y;
  Axby(x, w, b, y);
  // [1 + 10 + 10, 2 + 12 + 20] = [21, 34]
  const arma::fmat expected = {{21, 34}};
  ExpectNear(y, expected, 0.f);
}

TEST(Axby, ColumnBiasIsAddedToEveryColumn) {
  const arma::fmat w = {{1, 1}, {0, 2}};
  const arma::fmat x = {{1, 2, 3}, {4, 5, 6}};
  const arma::fmat b = arma::fvec{1, -1};
  arma::fmat y;
  Axby(x, w, b, y);
  const arma::fmat expected = {{6, 8, 10}, {7, 9, 11}};
  ExpectNear(y, expected, 0.f);
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
    SCOPED_TRACE("m=" + std::to_string(m) + " k=" + std::to_string(k) +
                 " n=" + std::to_string(n));
    ExpectNear(y, NaiveAxby(x, w, b), 1e-4f);
  }
}

TEST(Axby, InnerDimensionMismatchThrowsShapeError) {
  arma::fmat y;
  EXPECT_THROW(Axby(arma::fmat(3, 2), arma::fmat(4, 2), arma::fmat(4, 2), y), ShapeError);
}

TEST(Axby, BiasRowsMismatchThrowsShapeError) {
  arma::fmat y;
  EXPECT_THROW(Axby(arma::fmat(2, 5), arma::fmat(4, 2), arma::fmat(3, 5), y), ShapeError);
}

TEST(Axby, BiasColumnsMismatchThrowsShapeError) {
  arma::fmat y;
  EXPECT_THROW(Axby(arma::fmat(2, 5), arma::fmat(4, 2), arma::fmat(4, 3), y), ShapeError);
}

TEST(EPowerMinus, HandComputedValues) {
  const arma::fmat x = {{0, 1}, {-1, 2}};
  arma::fmat y;
  EPowerMinus(x, y);
  // e^0 = 1, e^-1 = 0.36787944, e^1 = 2.7182817, e^-2 = 0.13533528
  const arma::fmat expected = {{1.f, 0.36787944f}, {2.7182817f, 0.13533528f}};
  ExpectNear(y, expected, 1e-6f);
}

TEST(EPowerMinus, RandomShapesMatchStdExp) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 10; ++trial) {
    const arma::fmat x = RandomMatrix(rng, 1 + trial * 3, 2 + trial) * 5.f;
    arma::fmat y(1, 1);  // any previous shape is replaced
    EPowerMinus(x, y);
    arma::fmat expected(x.n_rows, x.n_cols);
    for (arma::uword i = 0; i < x.n_elem; ++i) expected(i) = std::exp(-x(i));
    ExpectNear(y, expected, 1e-5f * 150.f);
  }
}

}  // namespace
}  // namespace kuiper
