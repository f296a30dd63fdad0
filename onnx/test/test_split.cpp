// ONNX Split onto one engine operator with k outputs (torch.split, sizes from
// the outputs' inferred shapes), in each form the opsets give it: the `split`
// attribute (opset 11), the `split` input (13), `num_outputs` (18), equal parts
// (no split given). Expected values by hand from row-major 0, 1, 2, ...
#include <gtest/gtest.h>

#include "onnx_test_util.hpp"

namespace kuiper::testing {
namespace {

// Every output of a converted graph, row-major, run on `input`.
std::vector<std::vector<float>> RunAll(const pnnx::Graph& graph, const std::vector<float>& input) {
  RuntimeGraph runtime(graph, "test");
  runtime.Build();
  const std::vector<std::vector<sftensor>> inputs = {
      ValuesToBatch(input, runtime.input_operators()[0]->output_operand->shapes)};
  const auto outputs = runtime.Forward(inputs);
  std::vector<std::vector<float>> values;
  for (const auto& batch : outputs) values.push_back(BatchToValues(batch));
  return values;
}

using Outputs = std::vector<std::vector<float>>;

TEST(OnnxSplit, IsOneOperatorWithAnOutputPerPiece) {
  OneNodeModel m("Split", 11);
  m.Input("X", {1, 3, 2}).Output("A", {1, 1, 2}).Output("B", {1, 2, 2});
  SetInt(m.node, "axis", 1);
  SetInts(m.node, "split", {1, 2});
  const pnnx::Graph graph = ConvertOnnx(m.model);
  EXPECT_EQ(OperatorTypes(graph),
            (std::vector<std::string>{"pnnx.Input", "torch.split", "pnnx.Output", "pnnx.Output"}));
  EXPECT_EQ(graph.operators[1].outputs.size(), 2u) << "see kuiper/src/layer/split.cpp";
}

TEST(OnnxSplit, Opset11AttributeCutsTheChannels) {
  OneNodeModel m("Split", 11);
  m.Input("X", {1, 3, 2}).Output("A", {1, 1, 2}).Output("B", {1, 2, 2});
  SetInt(m.node, "axis", 1);
  SetInts(m.node, "split", {1, 2});
  EXPECT_EQ(RunAll(ConvertOnnx(m.model), Range(6)), (Outputs{{0, 1}, {2, 3, 4, 5}}));
}

TEST(OnnxSplit, Opset13InputWithANegativeAxis) {
  OneNodeModel m("Split", 13);
  m.Input("X", {1, 2, 3})
      .Constant(Ints("split", {2, 1}))
      .Output("A", {1, 2, 2})
      .Output("B", {1, 2, 1});
  SetInt(m.node, "axis", -1);
  // rows (0,1,2) and (3,4,5): columns 0-1, then column 2
  EXPECT_EQ(RunAll(ConvertOnnx(m.model), Range(6)), (Outputs{{0, 1, 3, 4}, {2, 5}}));
}

TEST(OnnxSplit, Opset18NumOutputsMakesTheLastPieceSmaller) {
  OneNodeModel m("Split", 18);
  m.Input("X", {1, 2, 7}).Output("A", {1, 2, 3}).Output("B", {1, 2, 3}).Output("C", {1, 2, 1});
  SetInt(m.node, "axis", 2);
  SetInt(m.node, "num_outputs", 3);
  // ceil(7/3) = 3: columns 0-2, 3-5, 6 of rows 0..6 and 7..13
  EXPECT_EQ(RunAll(ConvertOnnx(m.model), Range(14)),
            (Outputs{{0, 1, 2, 7, 8, 9}, {3, 4, 5, 10, 11, 12}, {6, 13}}));
}

TEST(OnnxSplit, NoSplitGivenMeansEqualParts) {
  OneNodeModel m("Split", 13);
  m.Input("X", {1, 4, 2}).Output("A", {1, 2, 2}).Output("B", {1, 2, 2});
  SetInt(m.node, "axis", 1);
  EXPECT_EQ(RunAll(ConvertOnnx(m.model), Range(8)), (Outputs{{0, 1, 2, 3}, {4, 5, 6, 7}}));
}

TEST(OnnxSplit, AOneDimensionalValueSplitsAsOneItem) {
  // ONNX's test_split_equal_parts_1d shape: (6) into 2; single-item mode (docs/onnx.md §2).
  OneNodeModel m("Split", 13);
  m.Input("X", {6}).Output("A", {3}).Output("B", {3});
  EXPECT_EQ(RunAll(ConvertOnnx(m.model), Range(6)), (Outputs{{0, 1, 2}, {3, 4, 5}}));
}

TEST(OnnxSplit, AnEmptyPieceIsRefusedNamingTheNode) {
  OneNodeModel m("Split", 13);
  m.Input("X", {1, 2, 3})
      .Constant(Ints("split", {0, 3}))
      .Output("A", {1, 2, 0})
      .Output("B", {1, 2, 3});
  SetInt(m.node, "axis", 2);
  ExpectErrorNamingNode(m.model, "empty piece");
}

TEST(OnnxSplit, TheBatchAxisInBatchModeFallsBackToOneItem) {
  // Splitting dimension 0 cannot keep it the engine's batch; the graph runs as one item.
  OneNodeModel m("Split", 13);
  m.Input("X", {4, 3}).Output("A", {2, 3}).Output("B", {2, 3});
  SetInt(m.node, "axis", 0);
  EXPECT_EQ(RunAll(ConvertOnnx(m.model), Range(12)),
            (Outputs{{0, 1, 2, 3, 4, 5}, {6, 7, 8, 9, 10, 11}}));
}

}  // namespace
}  // namespace kuiper::testing
