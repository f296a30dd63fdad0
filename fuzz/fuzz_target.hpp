// What every fuzz target shares: the libFuzzer entry point's signature, and the
// rule that kuiper::Error is the right answer to bad input. Any other
// exception (std::out_of_range, std::bad_alloc, ...) escapes, so libFuzzer and
// the replay driver report it like a crash.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "kuiper/error.hpp"
#include "kuiper/parallel.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace kuiper::fuzz {

// The memory limit (kuiper/memory_limit.hpp) while a graph target runs: what a
// fuzzed model may declare stays far below libFuzzer's -rss_limit_mb=2048, so
// a model the limit lets through and that still exhausts memory is a finding.
inline constexpr uint64_t kMemoryLimit = uint64_t{64} << 20;

// One thread: libFuzzer runs the target on one, and a finding must replay the
// same way (scripts/fuzz.sh also keeps a lab's OpenMP loops to one).
inline const bool kOneThread = (SetMaxThreads(1), true);

// Runs `read` on the input as text (the readers take bytes as a string_view).
template <typename Read>
int ReadOrReject(const uint8_t* data, size_t size, Read read) {
  try {
    read(std::string_view(reinterpret_cast<const char*>(data), size));
  } catch (const kuiper::Error&) {
    // rejected with a message: what bad input should get
  }
  return 0;
}

}  // namespace kuiper::fuzz
