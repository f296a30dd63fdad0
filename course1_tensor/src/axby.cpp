// Lab course1_tensor: see course1_tensor/README.md.
#include "kuiper/axby.hpp"

#include <fmt/format.h>

#include "kuiper/error.hpp"

namespace kuiper {

void Axby(const arma::fmat& x, const arma::fmat& w, const arma::fmat& b, arma::fmat& y) {
  // TODO(course1): compute y = w * x + b.
  // 1. Throw ShapeError (with a message giving the shapes) unless
  //    w.n_cols == x.n_rows, b.n_rows == w.n_rows and b has either x.n_cols
  //    columns or a single column.
  // 2. A single-column b is added to every column of w * x
  //    (hint: arma::repmat or .each_col()).
  // ---- your code begins ----
  KUIPER_TODO("course1", "Axby");
  // ---- your code ends ----
}

void EPowerMinus(const arma::fmat& x, arma::fmat& y) {
  // TODO(course1): set y to e^(-x) element by element (hint: arma::exp).
  // ---- your code begins ----
  KUIPER_TODO("course1", "EPowerMinus");
  // ---- your code ends ----
}

}  // namespace kuiper
