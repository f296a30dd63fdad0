// Lab course1_tensor (course1_tensor/src/axby.cpp): the two Armadillo
// functions the engine's dense layers are built on.
#pragma once

#include <armadillo>

namespace kuiper {

// y = w * x + b, the affine map of a fully connected layer.
// w is (m x k), x is (k x n); b is (m x n), or (m x 1) added to every column.
// Any other shapes throw ShapeError. y is resized to (m x n).
void Axby(const arma::fmat& x, const arma::fmat& w, const arma::fmat& b, arma::fmat& y);

// y = e^(-x), element by element. y is resized to x's shape.
void EPowerMinus(const arma::fmat& x, arma::fmat& y);

}  // namespace kuiper
