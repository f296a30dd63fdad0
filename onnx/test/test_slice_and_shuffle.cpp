// Slice (onto Tensor.slice) and ShuffleNet's channel shuffle (a 5-D
// Reshape -> Transpose -> Reshape whose trailing dims stay in place, merged to
// 4-D), against references computed here index by index.
#include <gtest/gtest.h>

#include <limits>

#include "onnx_test_util.hpp"

namespace kuiper::testing {
namespace {

// x.chunk(2, dim=1)'s second half: channels 2..3 of (1,4,2,3).
TEST(OnnxSlice, ChannelsOfAnImage) {
  OneNodeModel m("Slice", 13);
  m.Input("X", {1, 4, 2, 3})
      .Constant(Ints("starts", {2}))
      .Constant(Ints("ends", {4}))
      .Constant(Ints("axes", {1}))
      .Output("Y", {1, 2, 2, 3});
  std::vector<float> want;
  for (int i = 12; i < 24; ++i) want.push_back(static_cast<float>(i));
  EXPECT_EQ(MaxAbsDiff(RunGraph(ConvertOnnx(m.model), {Range(24)}), want), 0.f)
      << "see docs/onnx.md §3 (Slice)";
}

// start -6 of 7 is 1; an end past the axis (INT64_MAX, as exporters write
// "to the end") is clamped; step 2: elements 1, 3, 5 of each row.
TEST(OnnxSlice, NegativeStartHugeEndAndStepOnTheLastAxis) {
  OneNodeModel m("Slice", 13);
  m.Input("X", {1, 2, 7})
      .Constant(Ints("starts", {-6}))
      .Constant(Ints("ends", {std::numeric_limits<int64_t>::max()}))
      .Constant(Ints("axes", {-1}))
      .Constant(Ints("steps", {2}))
      .Output("Y", {1, 2, 3});
  EXPECT_EQ(MaxAbsDiff(RunGraph(ConvertOnnx(m.model), {Range(14)}), {1, 3, 5, 8, 10, 12}), 0.f);
}

// Opset 1..9: starts, ends, axes are attributes; two axes at once.
TEST(OnnxSlice, AttributeFormOnTwoAxes) {
  OneNodeModel m("Slice", 9);
  m.Input("X", {1, 3, 4}).Output("Y", {1, 2, 2});
  SetInts(m.node, "starts", {1, 1});
  SetInts(m.node, "ends", {3, 3});
  SetInts(m.node, "axes", {1, 2});
  // rows 1..2, cols 1..2 of the 3x4 matrix 0..11
  EXPECT_EQ(MaxAbsDiff(RunGraph(ConvertOnnx(m.model), {Range(12)}), {5, 6, 9, 10}), 0.f);
}

// A step past the axis takes the start alone.
TEST(OnnxSlice, HugeStepTakesOneElement) {
  OneNodeModel m("Slice", 13);
  m.Input("X", {1, 2, 7})
      .Constant(Ints("starts", {2}))
      .Constant(Ints("ends", {7}))
      .Constant(Ints("axes", {2}))
      .Constant(Ints("steps", {std::numeric_limits<int64_t>::max()}))
      .Output("Y", {1, 2, 1});
  EXPECT_EQ(MaxAbsDiff(RunGraph(ConvertOnnx(m.model), {Range(14)}), {2, 9}), 0.f);
}

// Negative steps: test_load_time_constants.cpp (OnnxSliceNegativeStep).

TEST(OnnxSlice, ComputedBoundsAreRefusedNamingTheNode) {
  OneNodeModel m("Slice", 13);
  m.Input("X", {1, 2, 7}).Input("starts", {1}).Constant(Ints("ends", {3})).Output("Y", {1, 2, 2});
  ExpectErrorNamingNode(m.model, "input 1 must be a constant");
}

// ShuffleNet's channel shuffle with g=2 groups of 3 channels: (1,6,2,2) ->
// (1,2,3,2,2) -> perm (0,2,1,3,4) -> (1,3,2,2,2) -> (1,6,2,2). Output channel
// j*2 + i is input channel i*3 + j. The 5-D values are ordinary N-D operands.
TEST(OnnxChannelShuffle, FiveDReshapeTransposeReshapeRuns) {
  onnx::ModelProto model;
  model.set_ir_version(7);
  model.add_opset_import()->set_version(13);
  onnx::GraphProto* g = model.mutable_graph();
  *g->add_input() = ValueInfo("X", {1, 6, 2, 2});
  *g->add_initializer() = Ints("five", {1, 2, 3, 2, 2});
  *g->add_initializer() = Ints("four", {1, 6, 2, 2});
  AddNode(g, "Reshape", {"X", "five"}, "r");
  SetInts(AddNode(g, "Transpose", {"r"}, "t"), "perm", {0, 2, 1, 3, 4});
  AddNode(g, "Reshape", {"t", "four"}, "Y");
  *g->add_output() = ValueInfo("Y", {1, 6, 2, 2});
  const pnnx::Graph graph = ConvertOnnx(model);
  const std::vector<float> x = Range(24);
  std::vector<float> want(24);
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 3; ++j) {
      for (int p = 0; p < 4; ++p) want[(j * 2 + i) * 4 + p] = x[(i * 3 + j) * 4 + p];
    }
  }
  EXPECT_EQ(MaxAbsDiff(RunGraph(graph, {x}), want), 0.f);
}

}  // namespace
}  // namespace kuiper::testing
