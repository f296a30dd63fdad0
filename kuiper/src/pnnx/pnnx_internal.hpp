// Helpers shared by the .param and .bin readers; not part of the public API.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kuiper/pnnx.hpp"

namespace kuiper::pnnx::internal {

// The largest attribute we accept, in elements. Bigger shapes are far beyond
// any model of this course and most likely a corrupt file, so they are
// rejected before anything is allocated for them.
inline constexpr uint64_t kMaxElements = uint64_t{1} << 31;

// The type spelled `name` ("f32", ...). Throws ParseError (without a location)
// for an unknown or unsupported spelling.
DataType ParseDataType(std::string_view name);

// The number of elements of `shape` (1 for the empty shape, a scalar), or
// nullopt if a dim is negative or the count exceeds kMaxElements.
std::optional<uint64_t> ElementCount(const std::vector<int>& shape);

// "(2,3)f32", the way the .param file spells a shape and type.
std::string ShapeText(const std::vector<int>& shape, DataType type);

}  // namespace kuiper::pnnx::internal
