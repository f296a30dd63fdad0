// Lab course2_padding: see course2_padding/README.md.
#include <fmt/format.h>

#include <algorithm>

#include "kuiper/error.hpp"
#include "kuiper/tensor.hpp"

namespace kuiper {

void Tensor<float>::Flatten(bool row_major) {
  // TODO(course2): turn the tensor into a 1-D tensor of all its size()
  // elements. With row_major they are read channel by channel, each channel
  // row by row, as torch.flatten reads them; otherwise in storage order
  // (README §3.3 works both orders out on a 2x2x3 tensor). Both the storage
  // (data_) and the logical shape (raw_shapes_) must describe a 1-D tensor
  // afterwards (README §3.2: how a 1-D tensor is stored).
  // ---- your code begins ----
  const uint32_t n = size();
  arma::fcube flat(1, n, 1);
  if (row_major) {
    // A channel stored column-major lists its transpose row by row.
    float* out = flat.memptr();
    for (uint32_t c = 0; c < channels(); ++c) {
      const arma::fmat transposed = data_.slice(c).t();
      out = std::copy(transposed.begin(), transposed.end(), out);
    }
  } else {
    std::copy(data_.begin(), data_.end(), flat.begin());
  }
  data_ = std::move(flat);
  raw_shapes_ = {n};
  // ---- your code ends ----
}

void Tensor<float>::Padding(const std::vector<uint32_t>& pads, float padding_value) {
  // TODO(course2): grow every channel by pads = {top, bottom, left, right}
  // rows and columns of padding_value, keeping the old values where they were
  // relative to each other (README §3.4 gives the formula and a worked example).
  // Refuse a pads of the wrong length, an empty tensor and pads that make a
  // side longer than a uint32_t holds with a ShapeError.
  // Then give the result its logical rank by the rules of README §3.5: they
  // depend on the rank the tensor had, not only on the new shape.
  // ---- your code begins ----
  if (pads.size() != 4) {
    throw ShapeError(
        fmt::format("Padding: expected 4 pads {{top, bottom, left, right}}, got {}", pads.size()));
  }
  if (empty()) throw ShapeError("Padding: the tensor is empty");
  const uint32_t top = pads[0], bottom = pads[1], left = pads[2], right = pads[3];
  // Summed in 64 bits: in uint32_t a huge pad would wrap to a small size.
  // Wrong: each pad is checked against the room left, but not their sum.
  const uint64_t rows64 = uint64_t{rows()} + top + bottom;
  const uint64_t cols64 = uint64_t{cols()} + left + right;
  if (top > UINT32_MAX - rows() || bottom > UINT32_MAX - rows() || left > UINT32_MAX - cols() ||
      right > UINT32_MAX - cols()) {
    throw ShapeError(
        fmt::format("Padding: pads {{{}, {}, {}, {}}} on {}x{} channels give {}x{}, "
                    "more than a uint32_t holds",
                    top, bottom, left, right, rows(), cols(), rows64, cols64));
  }
  const uint32_t new_rows = static_cast<uint32_t>(rows64);
  const uint32_t new_cols = static_cast<uint32_t>(cols64);
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
