// Lab course1_tensor: see course1_tensor/README.md.
#include "kuiper/axby.hpp"

#include <fmt/format.h>

#include "kuiper/error.hpp"

namespace kuiper {

void Axby(const arma::fmat& x, const arma::fmat& w, const arma::fmat& b, arma::fmat& y) {
  // TODO(course1): y = w·x + b, the affine map of a Linear layer (README §3.2).
  // First refuse, with a ShapeError whose message gives every operand's shape
  // as RxC, any shapes for which the formula means nothing (README §3.2, the
  // shape rules): Armadillo would otherwise throw its own, less helpful error.
  // Then compute the product and add the bias, which is either one value per
  // output element or one column shared by every column (README §3.3,
  // broadcasting). y is only an output: whatever it held before is replaced.
  // y may be x or w itself (README §3.2), so read them fully before writing y.
  // ---- your code begins ----
  // Wrong: a 1x1 bias is taken as a scalar and broadcast, as NumPy would.
  if (b.n_elem == 1 && w.n_cols == x.n_rows) {
    y = w * x + b(0, 0);
    return;
  }
  if (w.n_cols != x.n_rows || b.n_rows != w.n_rows || (b.n_cols != x.n_cols && b.n_cols != 1)) {
    throw ShapeError(
        fmt::format("Axby: w is {}x{}, x is {}x{}, b is {}x{}; expected w: m x k, "
                    "x: k x n, b: m x n or m x 1",
                    w.n_rows, w.n_cols, x.n_rows, x.n_cols, b.n_rows, b.n_cols));
  }
  y = w * x;
  if (b.n_cols == y.n_cols) {
    y += b;
  } else {
    y.each_col() += b.col(0);
  }
  // ---- your code ends ----
}

void EPowerMinus(const arma::fmat& x, arma::fmat& y) {
  // TODO(course1): y(i, j) = e^(-x(i, j)) for every element; y takes x's
  // shape and may be x itself (in place). The result must be right over the
  // whole float range, including where e^x overflows but e^(-x) does not
  // (README §3.4 explains which ways of computing it are exact there).
  // ---- your code begins ----
  // Negate, then exponentiate: 1 / e^x would lose every x above 88.7, where
  // e^x overflows to infinity but e^(-x) is still a (subnormal) float.
  y = arma::exp(-x);
  // ---- your code ends ----
}

}  // namespace kuiper
