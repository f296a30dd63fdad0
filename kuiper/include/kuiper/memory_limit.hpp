// The most memory a model or an input file may ask for. A damaged or hostile
// file can declare shapes of any size; the readers (.pnnx.bin, .npy, ONNX) and
// RuntimeGraph add up what the declared shapes need and throw ResourceError,
// naming the file or operand and the limit, before allocating it.
//
//   kuiper::SetMemoryLimit(uint64_t{8} << 30);  // allow 8 GiB (`kuiper --max-memory 8G`)
#pragma once

#include <cstdint>
#include <string>

namespace kuiper {

// 4 GiB: ResNet18 or YOLOv5s at batch 8 need well under 1 GiB, and the limit
// stays far below the memory of the machines the course runs on.
inline constexpr uint64_t kDefaultMemoryLimit = uint64_t{4} << 30;

// The limit in bytes, for the whole process (kDefaultMemoryLimit until set).
uint64_t MemoryLimit();
void SetMemoryLimit(uint64_t bytes);

// Sets the limit while it lives and restores the previous one when destroyed.
class MemoryLimitScope {
 public:
  explicit MemoryLimitScope(uint64_t bytes) : previous_(MemoryLimit()) { SetMemoryLimit(bytes); }
  ~MemoryLimitScope() { SetMemoryLimit(previous_); }
  MemoryLimitScope(const MemoryLimitScope&) = delete;
  MemoryLimitScope& operator=(const MemoryLimitScope&) = delete;

 private:
  uint64_t previous_;
};

// a * b, or UINT64_MAX when the product does not fit: a size computed from a
// corrupt shape must not wrap around to something small and pass the check.
uint64_t SaturatingMultiply(uint64_t a, uint64_t b);

// Throws ResourceError "<what> would take <bytes> bytes (<GiB>), more than the
// memory limit of <limit> bytes (<GiB>)" when bytes > limit, by default
// MemoryLimit() (a graph passes its own: RuntimeOptions::memory_limit).
void CheckMemory(uint64_t bytes, const std::string& what, uint64_t limit = MemoryLimit());

}  // namespace kuiper
