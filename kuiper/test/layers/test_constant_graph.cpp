// A graph with no input: what an ONNX model becomes when every value is known
// at load time (its inputs all bound, its output a constant; docs/onnx.md §1).
// RuntimeGraph runs it as one item. Loading needs lab course3.
#include <gtest/gtest.h>

#include "kuiper/graph.hpp"

namespace kuiper::test {
namespace {

TEST(ConstantGraph, GraphWithoutInputRunsOneItem) {
  const pnnx::Graph source = pnnx::ParseParam(
      "7767517\n2 1\ntorch.tensor t 0 1 c data=(1.5,-2.0)\npnnx.Output out 1 0 c\n",
      "constant.pnnx.param");
  RuntimeGraph graph(source, "constant.pnnx.param");
  graph.Build();
  const std::vector<std::vector<sftensor>> outputs =
      graph.Forward(std::vector<std::vector<sftensor>>{});
  ASSERT_EQ(outputs.size(), 1u);
  ASSERT_EQ(outputs[0].size(), 1u) << "one item, as Build allocated it";
  EXPECT_EQ(outputs[0][0]->values(/*row_major=*/true), (std::vector<float>{1.5f, -2.f}));
  // A second run: the same item (no batch 0 from an empty input list).
  EXPECT_EQ(graph.Forward(std::vector<std::vector<sftensor>>{}).at(0).size(), 1u);
}

}  // namespace
}  // namespace kuiper::test
