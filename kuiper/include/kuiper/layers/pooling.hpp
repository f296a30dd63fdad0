// Output sizes of the pooling layers (maxpool.cpp, avgpool.cpp), shared with
// their tests.
#pragma once

#include <cstdint>

namespace kuiper {

// PyTorch's pooling output size along one axis:
//   floor_or_ceil((in + 2 * padding - dilation * (kernel - 1) - 1) / stride) + 1,
// where with ceil_mode the last window must still start inside the input or
// its left padding (else one output less). 0 when no window fits.
uint32_t PoolOutputSize(uint32_t in, uint32_t kernel, uint32_t stride, uint32_t padding,
                        uint32_t dilation, bool ceil_mode);

}  // namespace kuiper
