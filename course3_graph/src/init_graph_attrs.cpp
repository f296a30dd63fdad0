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
  KUIPER_TODO("course3", "HalfToFloat");
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
    KUIPER_TODO("course3", "RuntimeGraph::InitGraphAttrs");
    // ---- your code ends ----
  }
}

}  // namespace kuiper
