// Fuzz target: the ONNX importer, from a model's bytes to the engine's graph
// (protobuf parse, shape inference, conversion, RuntimeGraph::Init, then Build:
// the layers created from the converted parameters and weights, the outputs
// allocated).
#include "fuzz_target.hpp"
#include "kuiper/graph.hpp"
#include "kuiper/memory_limit.hpp"
#include "kuiper/onnx_import.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const kuiper::MemoryLimitScope limit(kuiper::fuzz::kMemoryLimit);
  return kuiper::fuzz::ReadOrReject(data, size, [](std::string_view bytes) {
    kuiper::RuntimeGraph graph(kuiper::ConvertOnnx(kuiper::ParseOnnxModel(bytes, "fuzz.onnx")),
                               "fuzz.onnx");
    graph.Init();
    graph.Build();
  });
}
