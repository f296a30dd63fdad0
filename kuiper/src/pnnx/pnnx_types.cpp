// Data types of PNNX attributes and operands, and float32 attribute bytes as
// floats.
#include <fmt/format.h>

#include <bit>
#include <cstring>

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

std::vector<float> Attribute::ToFloat() const {
  // Only float32 bytes are weights a layer can use as they are: the graph
  // loader (RuntimeGraph::InitGraphAttrs) converts every other element type
  // to float32 once, when the graph loads, so the layers never need to.
  if (type != DataType::kF32) {
    throw ParseError(fmt::format(
        "attribute of type {} is not float32 weights (RuntimeGraph::InitGraphAttrs converts it "
        "when a graph loads)",
        DataTypeName(type)));
  }
  if (data.size() % sizeof(float) != 0) {
    throw ParseError(fmt::format("attribute data of {} bytes is not a whole number of {} elements",
                                 data.size(), DataTypeName(type)));
  }
  // memcpy because the bytes need not be aligned for float; never with empty data, whose
  // data() may be null (undefined behaviour for memcpy even for 0 bytes).
  std::vector<float> out(data.size() / sizeof(float));
  if (!out.empty()) std::memcpy(out.data(), data.data(), out.size() * sizeof(float));
  return out;
}

}  // namespace kuiper::pnnx
