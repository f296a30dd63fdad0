#include "kuiper/error.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace kuiper {

void Error::AddContext(const std::string& context) {
  // Only the std::runtime_error part is replaced: the dynamic type stays.
  std::runtime_error::operator=(std::runtime_error(fmt::format("{} ({})", what(), context)));
}

NotImplemented::NotImplemented(const std::string& lab, const std::string& what,
                               const std::string& file, int line)
    : Error(fmt::format("NotImplemented: {} TODO '{}' is not written yet ({}:{})", lab, what, file,
                        line)) {}

std::string ShapeText(const std::vector<int>& shape) {
  return fmt::format("({})", fmt::join(shape, ","));
}

std::string ShapeText(const std::vector<uint32_t>& shape) {
  return fmt::format("({})", fmt::join(shape, ","));
}

std::string ShapeText(const std::vector<int64_t>& shape) {
  return fmt::format("({})", fmt::join(shape, ","));
}

}  // namespace kuiper
