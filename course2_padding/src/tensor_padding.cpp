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
  KUIPER_TODO("course2", "Tensor::Flatten");
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
  KUIPER_TODO("course2", "Tensor::Padding");
  // ---- your code ends ----
}

}  // namespace kuiper
