// The activations a convolution may fuse, computed independently of the engine
// (in double) for the references of the core and course 6 tests.
#pragma once

#include <algorithm>
#include <cmath>

#include "kuiper/layers/activation.hpp"

namespace kuiper {

inline double ReferenceActivate(double v, Activation activation) {
  switch (activation) {
    case Activation::kRelu:
      return std::max(v, 0.0);
    case Activation::kSilu:
      return v / (1.0 + std::exp(-v));
    default:
      return v;
  }
}

}  // namespace kuiper
