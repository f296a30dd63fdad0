// Lab course6_conv: see course6_conv/README.md.
#include "kuiper/error.hpp"
#include "kuiper/layers/convolution.hpp"

namespace kuiper {

void ConvolutionLayer::ComputeGroups(const ftensor& input, ftensor& output) const {
  // TODO(course6): convolve `input` (in_channels x H x W) into `output`
  // (out_channels x out_h x out_w, already allocated), one group at a time.
  // With G = params_.groups, group g owns input channels
  // [g * in_channels / G, (g + 1) * in_channels / G) and output channels
  // [g * out_channels / G, (g + 1) * out_channels / G). For each group:
  // 1. columns = Im2Col(input, first input channel of g, in_channels / G,
  //    params_, out_h, out_w): a (in_channels / G * kh * kw) x (out_h * out_w)
  //    matrix.
  // 2. result = kernels_[g] * columns: row o is output channel
  //    g * out_channels / G + o, its positions in column-major order.
  // 3. Copy each row into its output channel (hint: arma::reshape(row, out_h,
  //    out_w) undoes the column-major order) and add bias_[channel] unless
  //    bias_ is empty.
  // ---- your code begins ----
  const uint32_t groups = params_.groups;
  const uint32_t in_per_group = params_.in_channels / groups;
  const uint32_t out_per_group = params_.out_channels / groups;
  const uint32_t out_h = output.rows(), out_w = output.cols();
  for (uint32_t g = 0; g < groups; ++g) {
    const arma::fmat columns = Im2Col(input, g * in_per_group, in_per_group, params_, out_h, out_w);
    const arma::fmat result = kernels_[g] * columns;
    for (uint32_t o = 0; o < out_per_group; ++o) {
      const uint32_t channel = g * out_per_group + o;
      arma::fmat& out = output.slice(channel);
      out = arma::reshape(result.row(o), out_h, out_w);
      if (!bias_.empty()) out += bias_[channel];
    }
  }
  // ---- your code ends ----
}

}  // namespace kuiper
