// Tensor<float>: the engine's n-dimensional array (one batch item).
//
// Storage is an arma::fcube of (rows x cols x channels). Armadillo keeps every
// slice (one channel) in column-major order, while PyTorch, NumPy and PNNX
// weights are row-major (C, H, W). Functions taking or returning flat data say
// which order they use through a `row_major` flag.
//
// raw_shapes() is the tensor's logical shape: {size} for 1-D, {rows, cols} for
// 2-D and {channels, rows, cols} for 3-D. shapes() is always the 3-D view.
// A 1-D tensor of n elements is stored as 1 channel x 1 row x n cols.
//
// Beyond 3-D (up to kMaxTensorRank dimensions, e.g. the (A, H, W, K) items of
// a YOLO head's 5-D operand), the last two dimensions are rows and cols and
// the leading ones are folded into the channels in row-major order: an
// (A, B, H, W) tensor is stored as A*B channels of H x W, channel a*B + b
// holding [a, b, :, :]. So values(row_major) and Fill(values, row_major) read
// and write the N-D tensor in row-major order, and a shape-agnostic layer
// works from raw_shapes() alone. Layers that need a layout (convolution,
// pooling, ...) accept 3-D tensors only.
#pragma once

#include <armadillo>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace kuiper {

// The most dimensions of one tensor (a batch item): an operand, whose batch
// is one more dimension, has at most 8, as in ONNX Runtime's common kernels.
inline constexpr size_t kMaxTensorRank = 7;

template <typename T>
class Tensor;

template <>
class Tensor<float> {
 public:
  Tensor() = default;
  // 1-D tensor of `size` elements.
  explicit Tensor(uint32_t size);
  // 2-D tensor of rows x cols.
  Tensor(uint32_t rows, uint32_t cols);
  // 3-D tensor of channels x rows x cols.
  Tensor(uint32_t channels, uint32_t rows, uint32_t cols);
  // Tensor of 1 to kMaxTensorRank dimensions from its logical shape (N-D ones
  // folded, see above); throws ShapeError otherwise.
  explicit Tensor(const std::vector<uint32_t>& shapes);
  // A tensor of `shapes` laid over `memory`, which it does not own and does
  // not clear: the graph's planned activation buffers (runtime_graph.cpp,
  // AllocateOutputs). `memory` holds size() floats and outlives the tensor.
  // Its size cannot change (Armadillo's strict auxiliary memory: Padding
  // throws std::logic_error); copies of it own their memory.
  Tensor(const std::vector<uint32_t>& shapes, float* memory);

  uint32_t rows() const;
  uint32_t cols() const;
  uint32_t channels() const;
  uint32_t size() const;
  bool empty() const;
  // Always {channels, rows, cols}.
  std::vector<uint32_t> shapes() const;
  // The logical shape: 1 to kMaxTensorRank dimensions.
  const std::vector<uint32_t>& raw_shapes() const;

  // Element `offset` in storage order (channel by channel, each column-major).
  float index(uint32_t offset) const;
  float& index(uint32_t offset);
  // Element at (channel, row, col); throws ShapeError when out of range.
  float at(uint32_t channel, uint32_t row, uint32_t col) const;
  float& at(uint32_t channel, uint32_t row, uint32_t col);

  // One channel as a (rows x cols) matrix; throws ShapeError when out of range.
  const arma::fmat& slice(uint32_t channel) const;
  arma::fmat& slice(uint32_t channel);

  arma::fcube& data();
  const arma::fcube& data() const;
  // Replaces the storage; the cube must have this tensor's rows, cols, channels.
  void set_data(const arma::fcube& data);

  float* raw_ptr();
  const float* raw_ptr() const;

  void Fill(float value);
  // Fills from `values` (exactly size() of them) read in row-major (C, H, W)
  // order when `row_major`, else in storage (column-major) order.
  void Fill(const std::vector<float>& values, bool row_major = true);
  // All elements, in row-major (C, H, W) order when `row_major`.
  std::vector<float> values(bool row_major = true) const;

  // Gives the tensor a new logical shape with the same number of elements.
  // Row-major keeps the (C, H, W) reading order, as torch.reshape does;
  // column-major keeps the storage order.
  void Reshape(const std::vector<uint32_t>& shapes, bool row_major = false);

  // Applies `fn` to every element in place.
  void Transform(const std::function<float(float)>& fn);

  void Ones();
  // Uniform values in [0, 1) from Armadillo's generator (seed it with arma::arma_rng::set_seed).
  void Rand();

  // ---- lab course2_padding (course2_padding/src/tensor_padding.cpp) ----
  // Turns the tensor into a 1-D tensor of all its elements, read in row-major
  // (C, H, W) order when `row_major`, else in storage order.
  void Flatten(bool row_major);
  // Grows every channel by pads = {top, bottom, left, right} rows/columns of
  // `padding_value`.
  void Padding(const std::vector<uint32_t>& pads, float padding_value);

 private:
  void CheckChannel(uint32_t channel) const;

  std::vector<uint32_t> raw_shapes_;
  arma::fcube data_;
};

using ftensor = Tensor<float>;
using sftensor = std::shared_ptr<Tensor<float>>;

// ---- tensor helpers ----
// A new zero tensor of the given logical shape (1 to kMaxTensorRank dimensions).
sftensor TensorCreate(const std::vector<uint32_t>& shapes);
sftensor TensorCreate(uint32_t channels, uint32_t rows, uint32_t cols);
// A deep copy.
sftensor TensorClone(const sftensor& tensor);
// True when both have the same shape and every element differs by at most `tolerance`.
bool TensorIsSame(const sftensor& a, const sftensor& b, float tolerance = 1e-5f);
// Element-wise a + b and a * b. Shapes must match, or one side must hold a
// single element that is broadcast; otherwise ShapeError.
sftensor TensorElementAdd(const sftensor& a, const sftensor& b);
sftensor TensorElementMultiply(const sftensor& a, const sftensor& b);

}  // namespace kuiper
