// Fuzz target: the .npy reader, then the split into a batch that `kuiper run`
// applies to what it reads.
#include "fuzz_target.hpp"
#include "kuiper/npy.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return kuiper::fuzz::ReadOrReject(data, size, [](std::string_view bytes) {
    kuiper::NpyToBatch(kuiper::ParseNpy(bytes, "fuzz.npy"));
  });
}
