// nn.Conv2d by im2col + GEMM.
//
// Im2Col (core, kuiper/src/layer/im2col.cpp) unfolds the input windows into a
// matrix so that a convolution becomes one matrix product per group; the
// grouped product itself, ConvolutionLayer::ComputeGroups, is lab
// course6_conv (course6_conv/src/convolution_groups.cpp).
#pragma once

#include <armadillo>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kuiper/layer.hpp"
#include "kuiper/tensor.hpp"

namespace kuiper {

// The geometry of a 2-D convolution, as nn.Conv2d's parameters name it.
struct ConvParams {
  uint32_t in_channels = 1;
  uint32_t out_channels = 1;
  uint32_t kernel_h = 1, kernel_w = 1;
  uint32_t stride_h = 1, stride_w = 1;
  uint32_t padding_h = 0, padding_w = 0;  // zeros on both sides
  uint32_t dilation_h = 1, dilation_w = 1;
  uint32_t groups = 1;
};

// PyTorch's output size along one axis:
//   floor((in + 2 * padding - dilation * (kernel - 1) - 1) / stride) + 1,
// or 0 when the dilated kernel does not fit into the padded input.
uint32_t ConvOutputSize(uint32_t in, uint32_t kernel, uint32_t stride, uint32_t padding,
                        uint32_t dilation);

// Unfolds `channels` channels of `input`, starting at `first_channel`, into the
// (out_h * out_w) x (channels * kernel_h * kernel_w) matrix whose
//   row    oy + ox * out_h                     is output position (oy, ox),
//          column-major like an Armadillo slice of the output;
//   column (c * kernel_h + i) * kernel_w + j   is kernel tap (c, i, j), the
//          order of one row-major PyTorch kernel (in/groups, kh, kw) flattened;
// holding input(first_channel + c, oy * stride_h + i * dilation_h - padding_h,
// ox * stride_w + j * dilation_w - padding_w), or 0 where that falls into the
// padding. No padded copy of the input is made. Column-major, each column (one
// tap over all positions) is a contiguous strided read of the input, and a
// product with the kernels lands directly in the output's memory.
// A 1x1 kernel with stride 1 and no padding needs no unfolding: the matrix is
// the input's channels themselves, and the result then reads `input`'s memory
// in place (no copy), so `input` must outlive it unchanged.
// Throws ShapeError when the channel range is outside the input.
arma::fmat Im2Col(const ftensor& input, uint32_t first_channel, uint32_t channels,
                  const ConvParams& params, uint32_t out_h, uint32_t out_w);

// Writes a * b into the column-major a.n_rows x b.n_cols matrix at `product`
// (for a convolution: into the output channels' own memory). The rows of a
// are split into one part per OpenMP thread, each a single-threaded BLAS GEMM,
// so that OpenMP is the engine's only thread pool. Inside a parallel region
// (batch items already run in parallel) the parts run on the calling thread,
// with the same split: the result never depends on the batch.
void MultiplyInto(const arma::fmat& a, const arma::fmat& b, float* product);

class ConvolutionLayer : public Layer {
 public:
  // `weight` is row-major (out_channels, in_channels / groups, kernel_h,
  // kernel_w) as PyTorch stores it; `bias` holds out_channels values or none.
  // Throws LayerError naming `name` when they do not fit `params`.
  ConvolutionLayer(std::string name, const ConvParams& params, const std::vector<float>& weight,
                   std::vector<float> bias);

  // Per batch item: input (in_channels, H, W) -> output (out_channels, out_h, out_w).
  InferStatus Forward(const std::vector<sftensor>& inputs, std::vector<sftensor>& outputs) override;

  // Lab course6_conv: convolves one batch item. `output` already has its
  // shape (out_channels, out_h, out_w); every element is overwritten.
  void ComputeGroups(const ftensor& input, ftensor& output) const;

  const ConvParams& params() const { return params_; }

 private:
  ConvParams params_;
  // One (in_channels / groups * kernel_h * kernel_w) x (out_channels / groups)
  // matrix per group: column o is the group's output channel o's kernel,
  // flattened row-major (exactly PyTorch's weight memory, read column-major).
  std::vector<arma::fmat> kernels_;
  std::vector<float> bias_;  // out_channels values, or empty without bias
};

// The creator registered for "nn.Conv2d".
std::unique_ptr<Layer> CreateConvolution(const RuntimeOperator& op);

}  // namespace kuiper
