// Fuzz target: the .pnnx.param reader, then the engine's graph built from what
// it returns (operators, operands, typed parameters, edges), so a reader that
// accepts an inconsistent graph is caught where the engine trips over it.
#include "fuzz_target.hpp"
#include "kuiper/graph.hpp"
#include "kuiper/pnnx.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return kuiper::fuzz::ReadOrReject(data, size, [](std::string_view text) {
    kuiper::RuntimeGraph graph(kuiper::pnnx::ParseParam(text, "fuzz.pnnx.param"),
                               "fuzz.pnnx.param");
    graph.Init();
  });
}
