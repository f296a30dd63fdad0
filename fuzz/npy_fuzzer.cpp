// Fuzz target: the .npy reader, then what `kuiper run` does with the array:
// the split into a batch, and ArrayToInput/OutputToArray against a few declared
// inputs (a dynamic batch, a 5-D operand, a value without a batch axis).
#include <vector>

#include "fuzz_target.hpp"
#include "kuiper/npy.hpp"
#include "kuiper/runtime.hpp"

namespace {

std::vector<kuiper::RuntimeOperand> DeclaredInputs() {
  std::vector<kuiper::RuntimeOperand> inputs(3);
  inputs[0].shapes = {-1, 3, 4};       // `?` batch, as PNNX writes it
  inputs[1].shapes = {1, 2, 3, 4, 5};  // an N-D operand
  inputs[2].shapes = {1, 3, 4};        // ONNX value (3,4) held as one item
  inputs[2].unbatched_shape = std::vector<int>{3, 4};
  return inputs;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::vector<kuiper::RuntimeOperand> inputs = DeclaredInputs();
  return kuiper::fuzz::ReadOrReject(data, size, [](std::string_view bytes) {
    const kuiper::NpyArray array = kuiper::ParseNpy(bytes, "fuzz.npy");
    // Each use may refuse the array with a message; the next one still runs.
    try {
      kuiper::NpyToBatch(array);
    } catch (const kuiper::Error&) {
    }
    for (const kuiper::RuntimeOperand& input : inputs) {
      try {
        kuiper::OutputToArray(kuiper::ArrayToInput(array, input, "x"), input);
      } catch (const kuiper::Error&) {
      }
    }
  });
}
