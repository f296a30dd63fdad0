// Fuzz target: the .pnnx.param reader, then the engine's graph built from what
// it returns: Init (operators, operands, typed parameters, edges) and Build
// (the order, every layer created from its fuzzed parameters, the outputs
// allocated), so a reader that accepts an inconsistent graph is caught where
// the engine trips over it. The attributes hold no data (there is no .pnnx.bin).
#include "fuzz_target.hpp"
#include "kuiper/graph.hpp"
#include "kuiper/memory_limit.hpp"
#include "kuiper/pnnx.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const kuiper::MemoryLimitScope limit(kuiper::fuzz::kMemoryLimit);
  return kuiper::fuzz::ReadOrReject(data, size, [](std::string_view text) {
    kuiper::RuntimeGraph graph(kuiper::pnnx::ParseParam(text, "fuzz.pnnx.param"),
                               "fuzz.pnnx.param");
    graph.Init();
    graph.Build();
  });
}
