// course1 stretch task: LogSumExp and Softmax over the columns of a matrix,
// with no overflow for large inputs. References are hand values (ln 2,
// 1 / (1 + e)) and naive double loops on inputs small enough not to overflow.
#include <gtest/gtest.h>

#include <armadillo>
#include <cmath>
#include <random>

#include "kuiper/error.hpp"

namespace kuiper::stretch {
// Defined in course1_tensor/src/stretch_softmax.cpp.
arma::frowvec LogSumExp(const arma::fmat& x);
void Softmax(const arma::fmat& x, arma::fmat& y);
}  // namespace kuiper::stretch

namespace kuiper {
namespace {

using stretch::LogSumExp;
using stretch::Softmax;

TEST(LogSumExp, HandComputedSmallValues) {
  // Column 0: ln(e^0 + e^0) = ln 2. Column 1: ln(e^0 + e^ln 3) = ln(1 + 3) = ln 4.
  const arma::fmat x = {{0.f, 0.f}, {0.f, std::log(3.f)}};
  const arma::frowvec r = LogSumExp(x);
  ASSERT_EQ(r.n_elem, 2u) << "one value per column; see README §10";
  EXPECT_NEAR(r(0), std::log(2.0), 1e-6) << "see README §10";
  EXPECT_NEAR(r(1), std::log(4.0), 1e-6) << "see README §10";
}

TEST(LogSumExp, LargeInputsDoNotOverflow) {
  // ln(e^1000 + e^1000) = 1000 + ln 2 and ln(e^-1000 + e^-1000) = -1000 + ln 2:
  // e^1000 is infinite and e^-1000 is 0 in float, so the naive sum fails both.
  const arma::fmat x = {{1000.f, -1000.f}, {1000.f, -1000.f}};
  const arma::frowvec r = LogSumExp(x);
  ASSERT_EQ(r.n_elem, 2u) << "see README §10";
  EXPECT_NEAR(r(0), 1000.0 + std::log(2.0), 1e-3) << "see README §10 (shift by the maximum)";
  EXPECT_NEAR(r(1), -1000.0 + std::log(2.0), 1e-3) << "see README §10 (shift by the maximum)";
}

TEST(LogSumExp, RandomColumnsMatchNaiveDoubleSum) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> value(-20.f, 20.f);
  arma::fmat x(7, 9);
  for (float& v : x) v = value(rng);
  const arma::frowvec r = LogSumExp(x);
  ASSERT_EQ(r.n_elem, x.n_cols) << "see README §10";
  for (arma::uword j = 0; j < x.n_cols; ++j) {
    double sum = 0;
    for (arma::uword i = 0; i < x.n_rows; ++i) sum += std::exp(double(x(i, j)));
    EXPECT_NEAR(r(j), std::log(sum), 1e-4) << "column " << j << "; see README §10";
  }
}

TEST(LogSumExp, NoRowsThrowsShapeError) {
  EXPECT_THROW(LogSumExp(arma::fmat(0, 3)), ShapeError) << "see README §10";
}

TEST(Softmax, HandComputedColumn) {
  // e^0 : e^ln3 = 1 : 3, so the column becomes 1/4, 3/4.
  const arma::fmat x = arma::fvec{0.f, std::log(3.f)};
  arma::fmat y;
  Softmax(x, y);
  ASSERT_EQ(y.n_rows, 2u) << "see README §10";
  ASSERT_EQ(y.n_cols, 1u) << "see README §10";
  EXPECT_NEAR(y(0, 0), 0.25, 1e-6) << "see README §10";
  EXPECT_NEAR(y(1, 0), 0.75, 1e-6) << "see README §10";
}

TEST(Softmax, LargeInputsGiveFiniteProbabilities) {
  // softmax(1000, 1001) = (1, e) / (1 + e) = (0.26894142, 0.73105858).
  const arma::fmat x = arma::fvec{1000.f, 1001.f};
  arma::fmat y;
  Softmax(x, y);
  ASSERT_EQ(y.n_elem, 2u) << "see README §10";
  EXPECT_NEAR(y(0), 0.26894142, 1e-5) << "see README §10 (no overflow)";
  EXPECT_NEAR(y(1), 0.73105858, 1e-5) << "see README §10 (no overflow)";
}

TEST(Softmax, EveryColumnIsADistributionMatchingNaiveLoops) {
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> value(-10.f, 10.f);
  arma::fmat x(5, 6);
  for (float& v : x) v = value(rng);
  arma::fmat y(2, 2);  // replaced
  Softmax(x, y);
  ASSERT_EQ(y.n_rows, x.n_rows) << "see README §10";
  ASSERT_EQ(y.n_cols, x.n_cols) << "see README §10";
  for (arma::uword j = 0; j < x.n_cols; ++j) {
    double sum = 0;
    for (arma::uword i = 0; i < x.n_rows; ++i) sum += std::exp(double(x(i, j)));
    double total = 0;
    for (arma::uword i = 0; i < x.n_rows; ++i) {
      EXPECT_NEAR(y(i, j), std::exp(double(x(i, j))) / sum, 1e-6)
          << "row " << i << " column " << j << "; see README §10";
      total += y(i, j);
    }
    EXPECT_NEAR(total, 1.0, 1e-5) << "column " << j << " must sum to 1; see README §10";
  }
}

TEST(Softmax, NoRowsThrowsShapeError) {
  arma::fmat y;
  EXPECT_THROW(Softmax(arma::fmat(0, 3), y), ShapeError) << "see README §10";
}

}  // namespace
}  // namespace kuiper
