// Data types of PNNX attributes and operands, and conversion of raw attribute
// bytes to float.
#include <fmt/format.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "kuiper/error.hpp"
#include "pnnx_internal.hpp"

namespace kuiper::pnnx {

// The .bin holds little-endian bytes and we copy them straight into numbers.
static_assert(std::endian::native == std::endian::little,
              "the PNNX reader assumes a little-endian machine");

size_t DataTypeSize(DataType type) {
  switch (type) {
    case DataType::kNull:
      return 0;
    case DataType::kF32:
      return 4;
    case DataType::kF64:
      return 8;
    case DataType::kF16:
      return 2;
    case DataType::kI64:
      return 8;
    case DataType::kI32:
      return 4;
    case DataType::kI16:
      return 2;
    case DataType::kI8:
      return 1;
    case DataType::kU8:
      return 1;
    case DataType::kBool:
      return 1;
  }
  return 0;
}

std::string_view DataTypeName(DataType type) {
  switch (type) {
    case DataType::kNull:
      return "null";
    case DataType::kF32:
      return "f32";
    case DataType::kF64:
      return "f64";
    case DataType::kF16:
      return "f16";
    case DataType::kI64:
      return "i64";
    case DataType::kI32:
      return "i32";
    case DataType::kI16:
      return "i16";
    case DataType::kI8:
      return "i8";
    case DataType::kU8:
      return "u8";
    case DataType::kBool:
      return "bool";
  }
  return "null";
}

namespace internal {

DataType ParseDataType(std::string_view name) {
  for (DataType type :
       {DataType::kNull, DataType::kF32, DataType::kF64, DataType::kF16, DataType::kI64,
        DataType::kI32, DataType::kI16, DataType::kI8, DataType::kU8, DataType::kBool}) {
    if (name == DataTypeName(type)) return type;
  }
  // PNNX can also write complex and bfloat16 tensors; no layer of ours uses them.
  if (name == "c32" || name == "c64" || name == "c128" || name == "bf16") {
    throw ParseError(fmt::format("unsupported data type '{}'", name));
  }
  throw ParseError(fmt::format(
      "unknown data type '{}' (expected f32, f64, f16, i64, i32, i16, i8, u8 or bool)", name));
}

std::optional<uint64_t> ElementCount(const std::vector<int>& shape) {
  uint64_t count = 1;
  for (int dim : shape) {
    if (dim < 0) return std::nullopt;
    // Dividing instead of multiplying first keeps the check itself from overflowing.
    if (dim != 0 && count > kMaxElements / static_cast<uint64_t>(dim)) return std::nullopt;
    count *= static_cast<uint64_t>(dim);
  }
  return count;
}

std::string ShapeText(const std::vector<int>& shape, DataType type) {
  std::string dims;
  for (int dim : shape) {
    if (!dims.empty()) dims += ',';
    dims += dim < 0 ? "?" : std::to_string(dim);
  }
  return fmt::format("({}){}", dims, DataTypeName(type));
}

}  // namespace internal

namespace {

// IEEE 754 half precision: 1 sign bit, 5 exponent bits (bias 15), 10 mantissa
// bits. Written with ldexp so each case reads like the definition.
float HalfToFloat(uint16_t half) {
  const float sign = (half & 0x8000) ? -1.f : 1.f;
  const int exponent = (half >> 10) & 0x1F;
  const int mantissa = half & 0x3FF;
  if (exponent == 0) {  // zero or subnormal: 0.mantissa * 2^-14
    return sign * std::ldexp(static_cast<float>(mantissa), -24);
  }
  if (exponent == 0x1F) {  // all ones: infinity or not-a-number
    return mantissa == 0 ? sign * std::numeric_limits<float>::infinity()
                         : std::numeric_limits<float>::quiet_NaN();
  }
  // normal: 1.mantissa * 2^(exponent - 15)
  return sign * std::ldexp(static_cast<float>(0x400 | mantissa), exponent - 25);
}

// Reads the i-th element of type T from raw bytes; memcpy because the bytes
// need not be aligned for T.
template <typename T>
T Element(const std::vector<char>& data, size_t i) {
  T value;
  std::memcpy(&value, data.data() + i * sizeof(T), sizeof(T));
  return value;
}

}  // namespace

std::vector<float> Attribute::ToFloat() const {
  const size_t size = DataTypeSize(type);
  if (size == 0) throw ParseError("attribute of type null has no elements to convert");
  if (data.size() % size != 0) {
    throw ParseError(fmt::format("attribute data of {} bytes is not a whole number of {} elements",
                                 data.size(), DataTypeName(type)));
  }
  const size_t count = data.size() / size;
  std::vector<float> out(count);
  for (size_t i = 0; i < count; ++i) {
    switch (type) {
      case DataType::kF32:
        out[i] = Element<float>(data, i);
        break;
      case DataType::kF64:
        out[i] = static_cast<float>(Element<double>(data, i));
        break;
      case DataType::kF16:
        out[i] = HalfToFloat(Element<uint16_t>(data, i));
        break;
      case DataType::kI64:
        out[i] = static_cast<float>(Element<int64_t>(data, i));
        break;
      case DataType::kI32:
        out[i] = static_cast<float>(Element<int32_t>(data, i));
        break;
      case DataType::kI16:
        out[i] = Element<int16_t>(data, i);
        break;
      case DataType::kI8:
        out[i] = Element<int8_t>(data, i);
        break;
      case DataType::kU8:
        out[i] = Element<uint8_t>(data, i);
        break;
      case DataType::kBool:
        out[i] = Element<uint8_t>(data, i) != 0 ? 1.f : 0.f;
        break;
      case DataType::kNull:
        break;  // rejected above
    }
  }
  return out;
}

}  // namespace kuiper::pnnx
