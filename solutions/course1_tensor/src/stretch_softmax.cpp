// Stretch task of course1_tensor (optional, label course1_stretch): a softmax
// that does not overflow. See course1_tensor/README.md §10.
#include <fmt/format.h>

#include <armadillo>
#include <cmath>

#include "kuiper/error.hpp"

namespace kuiper::stretch {

// For every column j of x: log(sum_i e^x(i, j)), exact even where e^x(i, j)
// itself overflows. Throws ShapeError when x has no rows.
arma::frowvec LogSumExp(const arma::fmat& x);

// For every column j of x: y(i, j) = e^x(i, j) / sum_t e^x(t, j), so every
// column of y is positive and sums to 1. y takes x's shape. Throws ShapeError
// when x has no rows.
void Softmax(const arma::fmat& x, arma::fmat& y);

arma::frowvec LogSumExp(const arma::fmat& x) {
  // TODO(course1 stretch): README §10 shows why e^x overflows for x > 88.7 and
  // which identity lets you compute the log of the sum without ever forming a
  // large e^x. Refuse an x without rows (its sum would be empty).
  // ---- your code begins ----
  if (x.n_rows == 0) {
    throw ShapeError(fmt::format("LogSumExp: x is {}x{}; a column needs at least one value",
                                 x.n_rows, x.n_cols));
  }
  arma::frowvec result(x.n_cols);
  for (arma::uword j = 0; j < x.n_cols; ++j) {
    // Shifting by the column's largest value m leaves every exponent <= 0,
    // and log(sum e^x) = m + log(sum e^(x - m)) with the sum in [1, n].
    const float m = x.col(j).max();
    result(j) = m + std::log(arma::accu(arma::exp(x.col(j) - m)));
  }
  return result;
  // ---- your code ends ----
}

void Softmax(const arma::fmat& x, arma::fmat& y) {
  // TODO(course1 stretch): the softmax of every column, with no overflow for
  // any finite input and no loss of precision for large ones (README §10).
  // ---- your code begins ----
  if (x.n_rows == 0) {
    throw ShapeError(
        fmt::format("Softmax: x is {}x{}; a column needs at least one value", x.n_rows, x.n_cols));
  }
  // The same shift as in LogSumExp, but divide instead of subtracting the
  // log of the sum: near 1000 a float is only good to 6e-5, and subtracting
  // two such numbers would keep that error.
  y = x;
  y.each_row() -= arma::max(x, 0);
  y = arma::exp(y);
  y.each_row() /= arma::sum(y, 0);
  // ---- your code ends ----
}

}  // namespace kuiper::stretch
