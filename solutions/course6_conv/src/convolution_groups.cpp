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
  //    params_, out_h, out_w): the (out_h * out_w) x (in_channels / G * kh * kw)
  //    im2col matrix (an Im2ColMatrix), one row per output position.
  // 2. columns * kernels_[g] is (out_h * out_w) x (out_channels / G): column o
  //    is output channel g * out_channels / G + o, its positions in the
  //    column-major order of an output slice. The group's output channels are
  //    consecutive in memory, so write the product straight into them:
  //    MultiplyInto(columns, kernels_[g], output.slice(first channel).memptr(),
  //                 epilogue).
  // 3. The epilogue adds the bias and applies activation_ to each block of the
  //    product while it is in the cache: an Epilogue{bias, activation_} whose
  //    bias points at the group's first output channel's entry of bias_, or is
  //    nullptr when bias_ is empty.
  // ---- your code begins ----
  const uint32_t groups = params_.groups;
  const uint32_t in_per_group = params_.in_channels / groups;
  const uint32_t out_per_group = params_.out_channels / groups;
  const uint32_t out_h = output.rows(), out_w = output.cols();
  for (uint32_t g = 0; g < groups; ++g) {
    const Im2ColMatrix columns =
        Im2Col(input, g * in_per_group, in_per_group, params_, out_h, out_w);
    const Epilogue epilogue{bias_.empty() ? nullptr : bias_.data() + g * out_per_group,
                            activation_};
    MultiplyInto(columns, kernels_[g], output.slice(g * out_per_group).memptr(), epilogue);
  }
  // ---- your code ends ----
}

}  // namespace kuiper
