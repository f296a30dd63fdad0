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
  const ConvParams& p = params;
  if (p.kernel_h != 3 || p.kernel_w != 3 || p.stride_h != 1 || p.stride_w != 1 ||
      p.dilation_h != 1 || p.dilation_w != 1 || kernels.n_rows != 9 * input.channels()) {
    throw ShapeError(
        "WinogradF2x2_3x3: needs a 3x3 kernel, stride 1, dilation 1 and 9 weights "
        "per input channel and output channel");
  }
  const uint32_t out_h = ConvOutputSize(input.rows(), 3, 1, p.padding_h, 1);
  const uint32_t out_w = ConvOutputSize(input.cols(), 3, 1, p.padding_w, 1);
  if (out_h == 0 || out_w == 0) throw ShapeError("WinogradF2x2_3x3: input smaller than the kernel");
  const uint32_t channels = input.channels(), outputs = kernels.n_cols;
  using Mat4 = arma::fmat::fixed<4, 4>;
  const arma::fmat::fixed<4, 3> g_matrix = {
      {1.f, 0.f, 0.f}, {0.5f, 0.5f, 0.5f}, {0.5f, -0.5f, 0.5f}, {0.f, 0.f, 1.f}};
  const Mat4 bt = {{1, 0, -1, 0}, {0, 1, 1, 0}, {0, -1, 1, 0}, {0, 1, 0, -1}};
  const arma::fmat::fixed<2, 4> at = {{1, 1, 1, 0}, {0, 1, -1, -1}};
  // The kernels' transforms, once: u[o * channels + c] = G g G^T.
  std::vector<Mat4> u(size_t{outputs} * channels);
  for (uint32_t o = 0; o < outputs; ++o) {
    for (uint32_t c = 0; c < channels; ++c) {
      arma::fmat::fixed<3, 3> g;
      for (uint32_t i = 0; i < 3; ++i) {
        for (uint32_t j = 0; j < 3; ++j) g(i, j) = kernels(c * 9 + i * 3 + j, o);
      }
      u[size_t{o} * channels + c] = g_matrix * g * g_matrix.t();
    }
  }
  arma::fmat result(uint64_t{out_h} * out_w, outputs, arma::fill::zeros);
  std::vector<Mat4> v(channels);
  const int64_t in_h = input.rows(), in_w = input.cols();
  for (uint32_t ty = 0; ty < out_h; ty += 2) {
    for (uint32_t tx = 0; tx < out_w; tx += 2) {
      // The 4x4 input patch under outputs (ty..ty+1, tx..tx+1), per channel.
      for (uint32_t c = 0; c < channels; ++c) {
        Mat4 d;
        for (int64_t a = 0; a < 4; ++a) {
          for (int64_t b = 0; b < 4; ++b) {
            const int64_t y = int64_t{ty} + a - p.padding_h, x = int64_t{tx} + b - p.padding_w;
            d(a, b) = y < 0 || x < 0 || y >= in_h || x >= in_w ? 0.f : input.at(c, y, x);
          }
        }
        v[c] = bt * d * bt.t();
      }
      for (uint32_t o = 0; o < outputs; ++o) {
        Mat4 m(arma::fill::zeros);
        for (uint32_t c = 0; c < channels; ++c) m += u[size_t{o} * channels + c] % v[c];
        const arma::fmat::fixed<2, 2> y = at * m * at.t();
        for (uint32_t a = 0; a < 2 && ty + a < out_h; ++a) {
          for (uint32_t b = 0; b < 2 && tx + b < out_w; ++b) {
            result(ty + a + uint64_t{tx + b} * out_h, o) = y(a, b);
          }
        }
      }
    }
  }
  return result;
  // ---- your code ends ----
}

}  // namespace kuiper
