// Lab course6_conv, part 2: the grouped convolution (course6_conv/README.md §3.6-§3.7).
#include "kuiper/error.hpp"
#include "kuiper/layers/convolution.hpp"

namespace kuiper {

void ConvolutionLayer::ComputeGroups(const ftensor& input, ftensor& output) const {
  // TODO(course6): convolve one batch item, `input` (in_channels x H x W),
  // into `output` (out_channels x out_h x out_w, already allocated: overwrite
  // every element). With params_.groups = G, the layer is G independent
  // convolutions, each from its own share of the input channels to its own
  // share of the output channels (README §3.6). For each group, describe its
  // im2col matrix and multiply it by the group's kernels (kernels_) so that
  // the product lands directly in the group's output channels, with each
  // output channel's bias (bias_, possibly empty) added and activation_
  // applied while the product is still in the cache (README §3.7: which core
  // functions do this, and why no copy or transpose is needed). activation_
  // is ReLU or SiLU when the graph fused the following layer into this one;
  // leaving it out makes every model's answer wrong.
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
    MultiplyInto(columns, kernels_[g].matrix(), output.slice(g * out_per_group).memptr(), epilogue);
  }
  // ---- your code ends ----
}

}  // namespace kuiper
