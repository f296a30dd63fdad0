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
  KUIPER_TODO("course1_stretch", "LogSumExp");
  // ---- your code ends ----
}

void Softmax(const arma::fmat& x, arma::fmat& y) {
  // TODO(course1 stretch): the softmax of every column, with no overflow for
  // any finite input and no loss of precision for large ones (README §10).
  // ---- your code begins ----
  KUIPER_TODO("course1_stretch", "Softmax");
  // ---- your code ends ----
}

}  // namespace kuiper::stretch
