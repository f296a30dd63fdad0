// Lab course6_conv, part 1: the im2col unfolding (course6_conv/README.md §3.3-§3.5).
//
// An Im2ColMatrix (kuiper/include/kuiper/layers/convolution.hpp) describes the
// im2col matrix of one group without storing it. The core writes it through
// the function below: MultiplyInto asks for a block of a few hundred rows at
// a time and multiplies it by the kernels while it is in the cache;
// ToMatrix asks for one whole column at a time. By default the core's
// Winograd and direct routes take most convolutions of ResNet18 and YOLOv5s
// and never call it (README §8 lists the layers that do); `kuiper bench MODEL
// --conv-route im2col` sends every convolution through it.
#include <algorithm>
#include <cstdint>

#include "kuiper/error.hpp"
#include "kuiper/layers/convolution.hpp"

namespace kuiper {
namespace {

// Helpers of your own, if you want any (README §5, Hint 5).
// ---- your code begins ----
// ---- your code ends ----

}  // namespace

void Im2ColMatrix::FillBlock(uint64_t first_row, uint64_t rows, uint64_t first_col,
                             uint64_t last_col, float* block) const {
  // TODO(course6): write the part of the im2col matrix that lies in rows
  // [first_row, first_row + rows) and columns [first_col, last_col) into
  // `block`, column after column, each column `rows` floats long. Every
  // element must be written: the caller reuses the buffer without clearing it.
  // Which input pixel (or padding zero) belongs at (row, column) is the index
  // formula you derive in README §3.3; the members you need are input_,
  // first_channel_, params_ and out_h_ (out_w_ and channels_ only bound the
  // matrix). A block may start and end in the middle of an output column:
  // README §3.5 works through one. Make it correct first, then make it fast
  // (README §4 step 3, Hint 5): the division-free, copy-by-runs version keeps the
  // engine at full speed.
  // ---- your code begins ----
  KUIPER_TODO("course6", "Im2ColMatrix::FillBlock");
  // ---- your code ends ----
}

}  // namespace kuiper
