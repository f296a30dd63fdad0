#include "kuiper/memory_limit.hpp"

#include <fmt/format.h>

#include <atomic>
#include <limits>

#include "kuiper/error.hpp"

namespace kuiper {

namespace {

// Atomic because models may be loaded on several threads at once.
std::atomic<uint64_t> memory_limit{kDefaultMemoryLimit};

std::string Bytes(uint64_t bytes) {
  return fmt::format("{} bytes ({:.2f} GiB)", bytes, static_cast<double>(bytes) / (1 << 30));
}

}  // namespace

uint64_t MemoryLimit() { return memory_limit.load(); }

void SetMemoryLimit(uint64_t bytes) { memory_limit.store(bytes); }

uint64_t SaturatingMultiply(uint64_t a, uint64_t b) {
  if (a != 0 && b > std::numeric_limits<uint64_t>::max() / a) {
    return std::numeric_limits<uint64_t>::max();
  }
  return a * b;
}

void CheckMemory(uint64_t bytes, const std::string& what, uint64_t limit) {
  if (bytes <= limit) return;
  throw ResourceError(fmt::format("{} would take {}, more than the memory limit of {}", what,
                                  Bytes(bytes), Bytes(limit)));
}

}  // namespace kuiper
