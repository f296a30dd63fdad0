// Stretch task of lab course6_conv (optional, label course6_stretch, not part
// of the lab's grade): Winograd's F(2x2, 3x3) convolution for one group,
// README §10.1. Build it with `cmake --preset student -DKUIPER_STRETCH=ON`, then
// `ctest --preset student -L course6_stretch`.
#include <armadillo>
#include <vector>

#include "kuiper/error.hpp"
#include "kuiper/layers/convolution.hpp"
#include "kuiper/tensor.hpp"

namespace kuiper {

// The convolution of all channels of `input` (C = kernels.n_rows / 9 of them)
// with 3x3 kernels, stride 1, dilation 1 and zero padding (params.padding_h,
// params.padding_w), computed 2x2 outputs at a time by Winograd's F(2x2, 3x3).
// `kernels` is laid out like ConvolutionLayer's kernels_[g]: column o is output
// channel o's 9 * C weights in the order of im2col's columns. Returns the
// (out_h * out_w) x kernels.n_cols matrix that
// Im2Col(input, 0, C, params, out_h, out_w).ToMatrix() * kernels gives (row
// oy + ox * out_h). Throws ShapeError for any other geometry: kernel not 3x3,
// a stride or dilation other than 1, kernels.n_rows not 9 * input.channels(),
// or an input too small for one output.
arma::fmat WinogradF2x2_3x3(const ftensor& input, const ConvParams& params,
                            const arma::fmat& kernels);

arma::fmat WinogradF2x2_3x3(const ftensor& input, const ConvParams& params,
                            const arma::fmat& kernels) {
  // TODO(course6 stretch): check the geometry, transform each kernel once
  // (U = G g G^T), then for every 2x2 output tile transform its 4x4 input
  // patch (V = B^T d B, zeros outside the image), multiply U and V element by
  // element summing over channels, and transform back (Y = A^T M A), writing
  // only the outputs that exist (an odd output size has half tiles). README §10.1.
  // ---- your code begins ----
  KUIPER_TODO("course6", "WinogradF2x2_3x3");
  // ---- your code ends ----
}

}  // namespace kuiper
