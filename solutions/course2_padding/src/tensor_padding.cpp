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
  Reshape({size()}, row_major);
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
  if (pads.size() != 4) {
    throw ShapeError(fmt::format("Padding: expected 4 pads {{top, bottom, left, right}}, got {}",
                                 pads.size()));
  }
  if (empty()) throw ShapeError("Padding: the tensor is empty");
  const uint32_t top = pads[0], bottom = pads[1], left = pads[2], right = pads[3];
  const uint32_t new_rows = rows() + top + bottom;
  const uint32_t new_cols = cols() + left + right;
  arma::fcube padded(new_rows, new_cols, channels());
  padded.fill(padding_value);
  padded.subcube(top, left, 0, top + rows() - 1, left + cols() - 1, channels() - 1) = data_;
  data_ = std::move(padded);
  if (raw_shapes_.size() == 3) {
    raw_shapes_ = {channels(), new_rows, new_cols};
  } else if (raw_shapes_.size() == 1 && new_rows == 1) {
    raw_shapes_ = {new_cols};
  } else {
    raw_shapes_ = {new_rows, new_cols};
  }
  // ---- your code ends ----
}

}  // namespace kuiper
