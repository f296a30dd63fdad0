// Lab course2_padding: see course2_padding/README.md.
#include <fmt/format.h>

#include "kuiper/error.hpp"
#include "kuiper/tensor.hpp"

namespace kuiper {

void Tensor<float>::Flatten(bool row_major) {
  // TODO(course2): make this a 1-D tensor of all size() elements, in
  // row-major (channel, row, col) order when row_major, else in storage order.
  // Hint: one call of a Tensor method you already have.
  // ---- your code begins ----
  KUIPER_TODO("course2", "Tensor::Flatten");
  // ---- your code ends ----
}

void Tensor<float>::Padding(const std::vector<uint32_t>& pads, float padding_value) {
  // TODO(course2): grow every channel by pads = {top, bottom, left, right},
  // filling the new border with padding_value.
  // 1. Throw ShapeError if pads does not hold 4 values or the tensor is empty.
  // 2. Build a cube of the new size filled with padding_value, copy data_ into
  //    it at (top, left) (hint: arma::fcube::subcube), and move it into data_.
  // 3. Update raw_shapes_: a 3-D tensor stays 3-D, a 2-D one stays 2-D and a
  //    1-D one stays 1-D only while it still has a single row.
  // ---- your code begins ----
  KUIPER_TODO("course2", "Tensor::Padding");
  // ---- your code ends ----
}

}  // namespace kuiper
