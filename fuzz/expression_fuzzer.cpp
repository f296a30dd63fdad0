// Fuzz target: the expression parser (tokens, tree, reverse Polish) and, when
// the text parses, its evaluation on a batch of two small tensors per operand
// of ranks 1, 2 and 3, so broadcasting between every pair of ranks is reached;
// then once more into given output tensors, which must give the same bits.
#include <cstring>
#include <string>
#include <vector>

#include "fuzz_target.hpp"
#include "kuiper/expression.hpp"

namespace {

// @0 is (3), @1 is (2,3), @2 is (2,1,3): each broadcasts with the others.
std::vector<std::vector<kuiper::sftensor>> Operands() {
  const std::vector<std::vector<uint32_t>> shapes = {{3}, {2, 3}, {2, 1, 3}};
  std::vector<std::vector<kuiper::sftensor>> operands;
  float value = -1.5f;
  for (const auto& shape : shapes) {
    std::vector<kuiper::sftensor> batch;
    for (int item = 0; item < 2; ++item) {
      kuiper::sftensor tensor = kuiper::TensorCreate(shape);
      for (uint32_t i = 0; i < tensor->size(); ++i) tensor->index(i) = value += 0.75f;
      batch.push_back(tensor);
    }
    operands.push_back(batch);
  }
  return operands;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::vector<std::vector<kuiper::sftensor>> kOperands = Operands();
  return kuiper::fuzz::ReadOrReject(data, size, [](std::string_view text) {
    kuiper::ExpressionParser parser(std::string(text), static_cast<int>(kOperands.size()));
    const std::vector<kuiper::sftensor> fresh =
        kuiper::EvaluateReversePolish(parser.ReversePolish(), kOperands, /*batch=*/2);
    // Again into output tensors of the result's shape, as ExpressionLayer
    // passes its planned outputs: the same values, bit for bit.
    std::vector<kuiper::sftensor> into;
    for (const kuiper::sftensor& t : fresh) into.push_back(kuiper::TensorCreate(t->raw_shapes()));
    const std::vector<kuiper::sftensor> reused =
        kuiper::EvaluateReversePolish(parser.ReversePolish(), kOperands, /*batch=*/2, &into);
    for (size_t i = 0; i < fresh.size(); ++i) {
      if (std::memcmp(fresh[i]->raw_ptr(), reused[i]->raw_ptr(), fresh[i]->size() * 4) != 0) {
        __builtin_trap();
      }
    }
  });
}
