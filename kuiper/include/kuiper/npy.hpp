// NumPy .npy files: how inputs and PyTorch reference outputs reach the engine.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kuiper/tensor.hpp"

namespace kuiper {

struct RuntimeOperand;

// A C-order (row-major) array of floats and its shape.
struct NpyArray {
  std::vector<int64_t> shape;
  std::vector<float> data;
  // Read from an integer or bool dtype: `ints` holds the exact values (bool
  // as 0/1), `data` the same as floats (exact only up to 2^24).
  bool integer = false;
  std::vector<int64_t> ints;
};

// The largest integer magnitude up to which float32 holds every integer: 2^24.
inline constexpr int64_t kMaxExactInt = int64_t{1} << 24;

// Reads a .npy file (format versions 1-3) whose dtype is float32, float64,
// int8/16/32/64, uint8/16/32/64 (up to 2^63-1) or bool, converting to float. Throws ParseError
// naming the file for anything else: bad magic, Fortran order, big-endian data, a malformed header,
// a shape whose size overflows, or too little data.
NpyArray LoadNpy(const std::string& path);
// The same from the file's bytes in memory; `name` stands for the file in messages.
NpyArray ParseNpy(std::string_view bytes, const std::string& name);

// Writes a float32 .npy file (format 1.0). Throws Error if it cannot write.
void SaveNpy(const std::string& path, const NpyArray& array);

// Splits an array into a batch along its first dimension: (N, C, H, W) gives
// N tensors of (C, H, W), (N, F) gives N 1-D tensors, (N, A, H, W, K) N 4-D
// ones. Throws ShapeError for ranks outside 2..8.
std::vector<sftensor> NpyToBatch(const NpyArray& array);

// Stacks a batch of equally shaped tensors into an array of shape
// (N, raw_shapes...). Throws ShapeError if the shapes differ.
NpyArray BatchToNpy(const std::vector<sftensor>& batch);

// Inputs as the model declares them (`kuiper run MODEL a.npy ...`). The array
// for graph input `operand` (the output operand of its pnnx.Input) keeps its
// full shape and is checked against the shape the model declares:
// - a value without a batch axis (operand.unbatched_shape: an ONNX graph the
//   importer converts as one item, such as MatMul (3,4) x (4,3)) must have
//   exactly that shape and becomes one item of the engine's shape;
// - otherwise dimension 0 is the batch: any size is accepted (the graph runs
//   at the batch it is given) and the other dimensions must equal the
//   annotated ones (unknown ones, -1, match anything); the array is split
//   along dimension 0 as NpyToBatch does.
// Throws ShapeError naming `input_name` and both shapes when they differ, or
// when an integer array holds a value float32 does not (CheckExactInFloat).
std::vector<sftensor> ArrayToInput(const NpyArray& array, const RuntimeOperand& operand,
                                   const std::string& input_name);

// Throws ShapeError naming `input_name` when `array` is an integer array with
// a value beyond +-2^24 (kMaxExactInt), which float32 would not hold exactly.
void CheckExactInFloat(const NpyArray& array, const std::string& input_name);

// The array for a graph output read from `operand` (the operand a pnnx.Output
// reads): without a batch axis when the model declares it so (the one item,
// in the declared shape), else BatchToNpy.
NpyArray OutputToArray(const std::vector<sftensor>& batch, const RuntimeOperand& operand);

}  // namespace kuiper
