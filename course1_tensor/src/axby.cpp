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
  KUIPER_TODO("course1", "Axby");
  // ---- your code ends ----
}

void EPowerMinus(const arma::fmat& x, arma::fmat& y) {
  // TODO(course1): y(i, j) = e^(-x(i, j)) for every element; y takes x's
  // shape and may be x itself (in place). The result must be right over the
  // whole float range, including where e^x overflows but e^(-x) does not
  // (README §3.4 explains which ways of computing it are exact there).
  // ---- your code begins ----
  KUIPER_TODO("course1", "EPowerMinus");
  // ---- your code ends ----
}

}  // namespace kuiper
