// nn.Conv2d by im2col + GEMM.
//
// An Im2ColMatrix describes the input windows unfolded into a matrix, so that
// a convolution becomes one matrix product per group; MultiplyInto (core,
// kuiper/src/layer/im2col.cpp) is that product. Lab course6_conv writes the
// unfolding (Im2ColMatrix::FillBlock, course6_conv/src/im2col_unfold.cpp) and
// the grouped convolution on top (ConvolutionLayer::ComputeGroups,
// course6_conv/src/convolution_groups.cpp).
#pragma once

#include <armadillo>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kuiper/layer.hpp"
#include "kuiper/layers/activation.hpp"
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

// The im2col matrix of `channels` channels of `input`, starting at
// `first_channel`: (out_h * out_w) x (channels * kernel_h * kernel_w), whose
//   row    oy + ox * out_h                     is output position (oy, ox),
//          column-major like an Armadillo slice of the output;
//   column (c * kernel_h + i) * kernel_w + j   is kernel tap (c, i, j), the
//          order of one row-major PyTorch kernel (in/groups, kh, kw) flattened;
// holding input(first_channel + c, oy * stride_h + i * dilation_h - padding_h,
// ox * stride_w + j * dilation_w - padding_w), or 0 where that falls into the
// padding (no padded copy of the input is made). Times the kernels, it gives
// the output channels column by column, in the output's own memory layout.
//
// The matrix is described here, not stored: for a 640x640 YOLOv5 image it would
// be 44 MB, written once and read once from main memory. MultiplyInto unfolds
// it a block of rows at a time into a buffer that stays in the cache while the
// GEMM reads it; ToMatrix() unfolds all of it (tests, small inputs).
// `input` must outlive the matrix, unchanged.
class Im2ColMatrix {
 public:
  // Throws ShapeError when the channel range is outside the input.
  Im2ColMatrix(const ftensor& input, uint32_t first_channel, uint32_t channels,
               const ConvParams& params, uint32_t out_h, uint32_t out_w);

  uint64_t n_rows() const { return uint64_t{out_h_} * out_w_; }
  uint64_t n_cols() const { return uint64_t{channels_} * params_.kernel_h * params_.kernel_w; }

  // A 1x1 kernel with stride 1 and no padding needs no unfolding: the matrix
  // is the input's channels themselves, column-major with columns n_rows()
  // apart. Their address then, else nullptr.
  const float* InPlace() const;

  // Rows [first_row, first_row + rows) of columns [first_col, last_col),
  // written column-major into `block`, its columns `rows` floats apart; every
  // element of the block is written. Lab course6_conv
  // (course6_conv/src/im2col_unfold.cpp): MultiplyInto and ToMatrix call it
  // for every matrix that is not InPlace().
  void FillBlock(uint64_t first_row, uint64_t rows, uint64_t first_col, uint64_t last_col,
                 float* block) const;

  // The whole matrix; its columns are shared out among the OpenMP threads
  // (FillBlock one column at a time), or copied from the input when InPlace().
  arma::fmat ToMatrix() const;

  // What the matrix describes (the Winograd route reads the input itself).
  const ftensor& input() const { return input_; }
  uint32_t first_channel() const { return first_channel_; }
  uint32_t channels() const { return channels_; }
  const ConvParams& params() const { return params_; }
  uint32_t out_h() const { return out_h_; }
  uint32_t out_w() const { return out_w_; }

 private:
  const ftensor& input_;
  uint32_t first_channel_, channels_;
  ConvParams params_;
  uint32_t out_h_, out_w_;
};

// The im2col matrix of a group: the channels [first_channel, first_channel +
// channels) of `input`, as ComputeGroups (lab course6) describes each group.
inline Im2ColMatrix Im2Col(const ftensor& input, uint32_t first_channel, uint32_t channels,
                           const ConvParams& params, uint32_t out_h, uint32_t out_w) {
  return Im2ColMatrix(input, first_channel, channels, params, out_h, out_w);
}

// What MultiplyInto does to each block of the product right after computing
// it, while the block is still in the cache: adds bias[c] to column c (output
// channel c of the group), then applies the activation. The default does nothing.
struct Epilogue {
  const float* bias = nullptr;  // b.n_cols values, or nullptr for no bias
  Activation activation = Activation::kNone;
};

// Writes a * b into the column-major a.n_rows x b.n_cols matrix at `product`
// (for a convolution: into the output channels' own memory), throwing
// ShapeError when the inner sizes differ. One oneDNN GEMM (dnnl_sgemm), which
// oneDNN shares among the OpenMP threads itself (rows, columns or the inner
// dimension, as it judges best; oneDNN runs on the engine's OpenMP pool, so
// OpenMP stays the only thread pool); called inside a parallel region (batch
// items in parallel) it runs on the calling thread. `epilogue` is applied to
// every element once, after the product.
void MultiplyInto(const arma::fmat& a, const arma::fmat& b, float* product,
                  const Epilogue& epilogue = {});

// The same for an im2col matrix: blocks of a's rows are unfolded (FillBlock)
// and multiplied by b one at a time, each block by one single-threaded oneDNN
// GEMM with the epilogue applied while the block is in the cache, the blocks
// shared among the OpenMP threads; a small image (too few blocks for every
// thread to get two) is unfolded whole (ToMatrix) and multiplied as above, by
// one GEMM that oneDNN threads. A 1x1 InPlace() matrix is never unfolded.
// The block split depends only on the shapes and the thread count, never on
// whether the call runs inside a parallel region (a batch item in a parallel
// loop runs its blocks one after the other).
void MultiplyInto(const Im2ColMatrix& a, const arma::fmat& b, float* product,
                  const Epilogue& epilogue = {});

// A group's 3x3 kernels transformed for Winograd's F(2x2, 3x3) (winograd.cpp;
// lab course6's stretch task computes the same tile by tile): for each of the
// 16 elements e = (i, j) of G g G^T, a C_in x C_out column-major matrix U_e.
// `kernels` is laid out like a group's GEMM matrix: (9 C_in) x C_out, kernel o
// in column o, taps in im2col's column order.
// `tile` 4: Winograd's F(4x4, 3x3) instead, 36 elements of a 6x6 G g G^T
// (4x4 outputs from each 6x6 input patch: 1/4 of im2col's multiply-adds; U
// holds 36/9 = 4 times the kernels' weights, F(2x2, 3x3)'s 16/9).
class WinogradKernels {
 public:
  explicit WinogradKernels(const arma::fmat& kernels, uint32_t tile = 2);
  uint64_t in_channels() const { return in_channels_; }
  uint64_t out_channels() const { return out_channels_; }
  uint32_t tile() const { return tile_; }  // outputs per side of a tile: 2 or 4
  uint32_t elements() const { return (tile_ + 2) * (tile_ + 2); }  // 16 or 36
  const float* data() const { return u_.data(); }                  // U_0, U_1, ... U_(elements - 1)

 private:
  uint64_t in_channels_, out_channels_;
  uint32_t tile_;
  std::vector<float> u_;
};

// The product `a * kernels` that MultiplyInto computes, for a 3x3, stride-1,
// undilated im2col matrix, by Winograd's F(2x2, 3x3): the input is never
// unfolded (so FillBlock is not called); 16 GEMMs with 4/9 of im2col's
// multiply-adds and two transforms of additions only, each GEMM summing its
// products 16 input channels at a time. Same layout, same epilogue; results
// differ from im2col's only by rounding. Throws ShapeError for another geometry.
void WinogradMultiplyInto(const Im2ColMatrix& a, const WinogradKernels& kernels, float* product,
                          const Epilogue& epilogue = {});

// Winograd's transformed terms are larger than the outputs they cancel down
// to; summed in float over all input channels at once they would round more
// than im2col, so each GEMM adds partial sums of 16 channels, which round less
// than im2col at every width measured (docs/performance.md#winograd-accuracy).
// A layer takes this route only where RuntimeOptions::winograd_conv allows it
// (GroupKernels below).

// A group's kernels packed for the direct route (direct_conv.cpp): in blocks
// of 64 output channels (the last may have 16, 32 or 48), each block tap by
// tap, the block's weights of one tap contiguous. `kernels` is laid out like
// a group's GEMM matrix: (C_in kh kw) x C_out, kernel o in column o, taps in
// im2col's column order; C_out must be a multiple of 16 (Fits).
class DirectKernels {
 public:
  static bool Fits(uint64_t out_channels);
  // Whether the CPU has the AVX-512 the route's kernel is written for.
  static bool Fast();
  // Throws ShapeError when !Fits(kernels.n_cols).
  explicit DirectKernels(arma::fmat kernels);
  uint64_t rows() const { return rows_; }  // C_in kh kw: the im2col matrix's columns
  uint64_t out_channels() const { return out_channels_; }
  uint64_t block_out() const { return block_out_; }  // output channels per block
  const float* data() const { return w_.memptr(); }
  arma::fmat Matrix() const;  // unpacked again: the GEMM matrix it was made from

 private:
  uint64_t rows_, out_channels_, block_out_;
  arma::fmat w_;  // the packed weights, in the memory of the matrix they came from
};

// The product `a * kernels` that MultiplyInto computes, from the input itself:
// no im2col matrix (FillBlock is not called). Each output value is the same
// sum of products as im2col's, summed a block of at most 288 taps (whole
// input channels) at a time, as oneDNN's GEMM sums its inner dimension in
// blocks; results differ from im2col's only by rounding, no larger than
// im2col's own. Same layout, same epilogue. Throws ShapeError when `a` has
// another number of columns. Where the CPU is not Fast() (GroupKernels then
// never takes this route), it multiplies Matrix() on the im2col route instead.
void DirectMultiplyInto(const Im2ColMatrix& a, const DirectKernels& kernels, float* product,
                        const Epilogue& epilogue = {});

// The direct route wins where the output is small (oneDNN's GEMM is then
// short of rows to run at speed, and reads the kernels from memory for a few
// of them), im2col's GEMM on large outputs of many channels. GroupKernels
// takes the direct route for layers that the model declares with at most
// this many output positions per image,
constexpr uint64_t kDirectMaxPositions = 256;
// and, at any size, for layers of at most this many output channels per
// group and a kernel larger than 1x1: one or two blocks of the packed
// kernels, so each range of positions copies its input and reads the
// kernels once or twice, while im2col's GEMM is short of columns. The stems
// and the stride-2 layers of 64 and 128 channels gain; 256 or 512 channels
// at 40x40 and 20x20 do not, nor does a 1x1 kernel: see
// docs/performance.md#direct-route.
constexpr uint64_t kDirectAnySizeChannels = 128;

// The most input x output channels per group that the Winograd route takes
// (GroupKernels below).
constexpr uint64_t kWinogradMaxChannels = 512 * 512;

// A group's kernels in the one form the core multiplies them by, chosen when
// the layer is made (one form only: the model's weights are most of its
// memory):
// - where options.winograd_conv, Winograd's transformed kernels for a 3x3,
//   stride-1, undilated kernel with at least 16 input and 16 output channels
//   per group and at most kWinogradMaxChannels of them together: faster than
//   im2col from 64 to 256 channels, and than the direct route on ResNet18's
//   512->512 layers at 7x7, whose transformed kernels (16/9 of the weights)
//   hold more than their packed direct kernels but left the peak memory
//   almost as it was; larger layers were not measured. Below 16 channels the
//   transforms cost more than the GEMMs save. See
//   docs/performance.md#winograd-speed. Where options.winograd_f4, such layers
//   of at most 256 x 256 channels take F(4x4, 3x3) (tile 4): it is the faster
//   at every such shape of ResNet18 and YOLOv5s, and rounds more at every one
//   (docs/performance.md#winograd-f4); at 512 x 512 it is slower than the
//   direct route;
// - else, where options.direct_conv and DirectKernels::Fast(), for a layer with
//   a multiple of 16 output channels per group, at most kDirectAnySizeChannels
//   of them (kernels larger than 1x1) or at most kDirectMaxPositions output
//   positions as the model declares it, neither of Winograd's shape (with
//   Winograd off those go back to im2col) nor 1x1 stride 1: the packed
//   kernels of the direct route;
// - else the GEMM matrix of the im2col route.
// With both routes off (RuntimeOptions), every layer takes im2col, the route
// lab course6 writes.
class GroupKernels {
 public:
  // `matrix`: (C_in/G * kh * kw) x (C_out/G), as WinogradKernels takes it.
  // `expected_positions`: the output positions per image (out_h * out_w) at
  // the input size the model declares, or 0 when it is not known. Of
  // `options`, only the routes are read.
  GroupKernels(arma::fmat matrix, const ConvParams& params, uint64_t expected_positions = 0,
               const RuntimeOptions& options = {});
  bool winograd() const { return winograd_ != nullptr; }
  const WinogradKernels& winograd_kernels() const { return *winograd_; }
  bool direct() const { return direct_ != nullptr; }
  const DirectKernels& direct_kernels() const { return *direct_; }
  const arma::fmat& matrix() const { return matrix_; }  // empty on the other routes

 private:
  arma::fmat matrix_;
  std::shared_ptr<const WinogradKernels> winograd_;
  std::shared_ptr<const DirectKernels> direct_;
};

// MultiplyInto with a group's kernels, by the route they were made for.
void MultiplyInto(const Im2ColMatrix& a, const GroupKernels& b, float* product,
                  const Epilogue& epilogue = {});

// How a convolution is multiplied (MultiplyInto above):
// - kInPlace: 1x1, stride 1, no padding: the input is the im2col matrix, never unfolded;
// - kIm2Col: the lab's FillBlock unfolds the matrix, the core's GEMM multiplies it;
// - kWinograd, kDirect: the core's routes, which read the input themselves.
enum class ConvRoute { kInPlace, kIm2Col, kWinograd, kDirect };
const char* ConvRouteName(ConvRoute route);  // "in-place", "im2col", "winograd", "direct"

class ConvolutionLayer : public Layer {
 public:
  // `weight` is row-major (out_channels, in_channels / groups, kernel_h,
  // kernel_w) as PyTorch stores it; `bias` holds out_channels values or none.
  // Throws LayerError naming `name` when they do not fit `params`.
  // `expected_positions` (out_h * out_w at the input size the model declares,
  // 0 if unknown) lets the layer keep its kernels for the direct route;
  // `options` says which routes it may take (GroupKernels).
  ConvolutionLayer(std::string name, const ConvParams& params, const std::vector<float>& weight,
                   std::vector<float> bias, uint64_t expected_positions = 0,
                   const RuntimeOptions& options = {});

  // Per batch item: input (in_channels, H, W) -> output (out_channels, out_h, out_w).
  InferStatus Forward(const std::vector<sftensor>& inputs, std::vector<sftensor>& outputs) override;

  // Lab course6_conv: convolves one batch item. `output` already has its
  // shape (out_channels, out_h, out_w); every element is overwritten.
  void ComputeGroups(const ftensor& input, ftensor& output) const;

  const ConvParams& params() const { return params_; }

  // The route by which MultiplyInto multiplies this layer's groups, fixed by
  // the form its kernels were made in (GroupKernels) and, for kIm2Col, by
  // whether the matrix is the input itself. `kuiper bench` reports it, so a
  // student can see which layers reach their FillBlock.
  ConvRoute route() const;
  // Outputs per side of a Winograd tile (2 or 4), or 0 off the Winograd route.
  uint32_t winograd_tile() const;

  // The graph fuses a following ReLU or SiLU into the convolution: the
  // activation is then applied to each block of the output as it is computed.
  bool FuseActivation(Activation activation) override;
  Activation activation() const { return activation_; }

 private:
  ConvParams params_;
  Activation activation_ = Activation::kNone;
  // One (in_channels / groups * kernel_h * kernel_w) x (out_channels / groups)
  // matrix per group: column o is the group's output channel o's kernel,
  // flattened row-major (exactly PyTorch's weight memory, read column-major);
  // kept in the form the core multiplies fastest (GroupKernels).
  std::vector<GroupKernels> kernels_;
  std::vector<float> bias_;  // out_channels values, or empty without bias
};

// The creator registered for "nn.Conv2d": the routes are op.options'.
std::unique_ptr<Layer> CreateConvolution(const RuntimeOperator& op);

}  // namespace kuiper
