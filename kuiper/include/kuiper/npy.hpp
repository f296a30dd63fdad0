// NumPy .npy files: how inputs and PyTorch reference outputs reach the engine.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kuiper/tensor.hpp"

namespace kuiper {

// A C-order (row-major) array of floats and its shape.
struct NpyArray {
  std::vector<int64_t> shape;
  std::vector<float> data;
};

// Reads a .npy file (format versions 1-3) whose dtype is float32, float64,
// int64, int32, uint8 or bool, converting to float. Throws ParseError naming
// the file for anything else: bad magic, Fortran order, big-endian data, a
// malformed header, a shape whose size overflows, or too little data.
NpyArray LoadNpy(const std::string& path);
// The same from the file's bytes in memory; `name` stands for the file in messages.
NpyArray ParseNpy(std::string_view bytes, const std::string& name);

// Writes a float32 .npy file (format 1.0). Throws Error if it cannot write.
void SaveNpy(const std::string& path, const NpyArray& array);

// Splits an array into a batch along its first dimension: (N, C, H, W) gives
// N tensors of (C, H, W), (N, F) gives N 1-D tensors. Throws ShapeError for
// ranks outside 2..4.
std::vector<sftensor> NpyToBatch(const NpyArray& array);

// Stacks a batch of equally shaped tensors into an array of shape
// (N, raw_shapes...). Throws ShapeError if the shapes differ.
NpyArray BatchToNpy(const std::vector<sftensor>& batch);

}  // namespace kuiper
