// Fuzz target: the .pnnx.bin reader. The graph is fixed (the Linear model of
// kuiper/test/data/pnnx/linear.pnnx.param: @bias=(2)f32, @weight=(2,3)f32), so
// every input is a candidate zip for it; what loads is converted to float.
#include "fuzz_target.hpp"
#include "kuiper/pnnx.hpp"

namespace {

constexpr std::string_view kLinearParam =
    "7767517\n"
    "3 2\n"
    "pnnx.Input pnnx_input_0 0 1 0 #0=(1,3)f32\n"
    "nn.Linear linear 1 1 0 1 bias=True in_features=3 out_features=2 @bias=(2)f32 "
    "@weight=(2,3)f32\n"
    "pnnx.Output pnnx_output_0 1 0 1 #1=(1,2)f32\n";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const kuiper::pnnx::Graph kGraph = kuiper::pnnx::ParseParam(kLinearParam, "linear");
  return kuiper::fuzz::ReadOrReject(data, size, [](std::string_view bytes) {
    kuiper::pnnx::Graph graph = kGraph;
    kuiper::pnnx::ParseBin(graph, bytes, "fuzz.pnnx.bin");
    for (const auto& op : graph.operators) {
      for (const auto& [name, attr] : op.attrs) attr.ToFloat();
    }
  });
}
