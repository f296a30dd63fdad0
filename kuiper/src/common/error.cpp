#include "kuiper/error.hpp"

#include <fmt/format.h>

namespace kuiper {

NotImplemented::NotImplemented(const std::string& lab, const std::string& what,
                               const std::string& file, int line)
    : Error(fmt::format("NotImplemented: {} TODO '{}' is not written yet ({}:{})", lab, what, file,
                        line)) {}

}  // namespace kuiper
