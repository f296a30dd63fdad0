// Output sizes of the pooling layers, each formula written once: PyTorch's
// for nn.MaxPool2d / nn.AvgPool2d (maxpool.cpp, avgpool.cpp), ONNX's for
// kuiper.Pool (onnx_pool.cpp); the ONNX importer and the tests use both.
#pragma once

#include <cstdint>

namespace kuiper {

// PyTorch's pooling output size along one axis:
//   floor_or_ceil((in + 2 * padding - dilation * (kernel - 1) - 1) / stride) + 1,
// where with ceil_mode the last window must still start inside the input or
// its left padding (else one output less). 0 when no window fits.
uint32_t PoolOutputSize(uint32_t in, uint32_t kernel, uint32_t stride, uint32_t padding,
                        uint32_t dilation, bool ceil_mode);

// ONNX's pooling output size along one axis, padded by `pad_begin` and
// `pad_end`:
//   floor_or_ceil((in + pad_begin + pad_end - dilation * (kernel - 1) - 1) / stride) + 1,
// with no rule for where the last window starts. 0 when no window fits.
int64_t OnnxPoolOutputSize(int64_t in, int64_t kernel, int64_t stride, int64_t pad_begin,
                           int64_t pad_end, int64_t dilation, bool ceil_mode);

}  // namespace kuiper
