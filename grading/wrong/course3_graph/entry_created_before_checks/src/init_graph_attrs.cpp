// Lab course3_graph: see course3_graph/README.md.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "kuiper/error.hpp"
#include "kuiper/graph.hpp"

namespace kuiper {

namespace {

// The element of type T that starts at `bytes`: the .pnnx.bin holds
// little-endian bytes, like this machine (pnnx_types.cpp checks it), and
// memcpy because the bytes need not be aligned for T.
template <typename T>
T Read(const char* bytes) {
  T value;
  std::memcpy(&value, bytes, sizeof(T));
  return value;
}

// The value of one IEEE 754 half-precision number: 1 sign bit, 5 exponent bits,
// 10 mantissa bits (README §3.4). Every half is exactly a float.
float HalfToFloat(uint16_t half) {
  // TODO(course3): split `half` into its three fields and compute the value for
  // each kind of exponent: zero (zero or a subnormal), all ones (infinity or
  // NaN), anything else (a normal number). By hand: no half-float type or
  // library. README §3.4 decodes one half bit by bit.
  // ---- your code begins ----
  const float sign = (half & 0x8000) ? -1.f : 1.f;
  const int exponent = (half >> 10) & 0x1F;
  const int mantissa = half & 0x3FF;
  if (exponent == 0) {  // zero or subnormal: 0.mantissa * 2^-14 = mantissa * 2^-24
    return sign * std::ldexp(static_cast<float>(mantissa), -24);
  }
  if (exponent == 0x1F) {  // all ones: infinity, or NaN whatever the mantissa bits
    return mantissa == 0 ? sign * std::numeric_limits<float>::infinity()
                         : std::numeric_limits<float>::quiet_NaN();
  }
  // normal: 1.mantissa * 2^(exponent - 15) = (1024 + mantissa) * 2^(exponent - 25)
  return sign * std::ldexp(static_cast<float>(0x400 | mantissa), exponent - 25);
  // ---- your code ends ----
}

}  // namespace

void RuntimeGraph::InitGraphAttrs(const std::map<std::string, pnnx::Attribute>& attrs,
                                  RuntimeOperator& op) {
  for (const auto& [name, attr] : attrs) {
    // TODO(course3): store `attr` in op.attribute[name] as float weights: the
    // same shape, type pnnx::DataType::kF32, and `data` holding every element
    // of attr.data converted to float, in the same order (README §3.3).
    // Before converting, check the bytes against the shape (README §3.5): an
    // element type without a size, a negative dimension, a shape whose byte
    // count does not fit in 64 bits, or a byte count other than elements x
    // element size means a corrupt graph: throw a ParseError naming the
    // operator, the attribute and the numbers, and store nothing under `name`.
    // ---- your code begins ----
    RuntimeAttribute& weights = op.attribute[name];
    const size_t size = pnnx::DataTypeSize(attr.type);  // 0: kNull or not a type at all
    if (size == 0) {
      throw ParseError(fmt::format("operator '{}': attribute '{}' has no element type (type {})",
                                   op.name, name, static_cast<int>(attr.type)));
    }
    // Elements and bytes in 64 bits, each product checked before it is taken.
    uint64_t count = 1;
    for (int dim : attr.shape) {
      if (dim < 0 || (dim != 0 && count > std::numeric_limits<uint64_t>::max() / size / dim)) {
        throw ParseError(fmt::format("operator '{}': attribute '{}' has shape {}: no data fits it",
                                     op.name, name, ShapeText(attr.shape)));
      }
      count *= static_cast<uint64_t>(dim);
    }
    if (attr.data.size() != count * size) {
      throw ParseError(fmt::format(
          "operator '{}': attribute '{}' of shape {} {} needs {} bytes, its data holds {}", op.name,
          name, ShapeText(attr.shape), pnnx::DataTypeName(attr.type), count * size,
          attr.data.size()));
    }
    std::vector<float> values(count);
    for (size_t i = 0; i < count; ++i) {
      const char* at = attr.data.data() + i * size;
      switch (attr.type) {
        case pnnx::DataType::kF32:
          values[i] = Read<float>(at);
          break;
        case pnnx::DataType::kF64:
          values[i] = static_cast<float>(Read<double>(at));
          break;
        case pnnx::DataType::kF16:
          values[i] = HalfToFloat(Read<uint16_t>(at));
          break;
        case pnnx::DataType::kI64:
          values[i] = static_cast<float>(Read<int64_t>(at));
          break;
        case pnnx::DataType::kI32:
          values[i] = static_cast<float>(Read<int32_t>(at));
          break;
        case pnnx::DataType::kI16:
          values[i] = Read<int16_t>(at);
          break;
        case pnnx::DataType::kI8:
          values[i] = Read<int8_t>(at);
          break;
        case pnnx::DataType::kU8:
          values[i] = Read<uint8_t>(at);
          break;
        case pnnx::DataType::kBool:
          values[i] = Read<uint8_t>(at) != 0 ? 1.f : 0.f;
          break;
        case pnnx::DataType::kNull:
          break;  // rejected above: it has no size
      }
    }
    weights.type = pnnx::DataType::kF32;
    weights.shape = attr.shape;
    weights.data.resize(values.size() * sizeof(float));
    std::memcpy(weights.data.data(), values.data(), weights.data.size());
    // ---- your code ends ----
  }
}

}  // namespace kuiper
