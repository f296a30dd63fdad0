// Stretch task of course2_padding (optional, label course2_stretch): padding
// that mirrors the border instead of filling a constant. See
// course2_padding/README.md §10.
#include <fmt/format.h>

#include "kuiper/error.hpp"
#include "kuiper/tensor.hpp"

namespace kuiper::stretch {

// Pads every channel of `input` by pads = {top, bottom, left, right} as
// torch.nn.functional.pad(mode="reflect") does: the new rows and columns
// mirror the tensor around its first and last row/column, which are not
// repeated. Returns a 3-D tensor {channels, rows + top + bottom, cols + left +
// right}. Throws ShapeError when pads does not hold 4 values, the tensor is
// empty, or a pad is not smaller than the size it mirrors (top and bottom
// must be < rows, left and right < cols).
ftensor PadReflect(const ftensor& input, const std::vector<uint32_t>& pads);

ftensor PadReflect(const ftensor& input, const std::vector<uint32_t>& pads) {
  // TODO(course2 stretch): README §10 derives where each new element is read
  // from (a reflection of the row and of the column index) and why a pad must
  // be smaller than the size it mirrors.
  // ---- your code begins ----
  KUIPER_TODO("course2_stretch", "PadReflect");
  // ---- your code ends ----
}

}  // namespace kuiper::stretch
