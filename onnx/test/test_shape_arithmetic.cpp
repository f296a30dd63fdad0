// Shape arithmetic folded to constants (Shape, Gather, integer Add/Sub/Mul/Div:
// how torch.onnx.export writes x.chunk(2, dim=1)'s bounds) and ReduceMean over
// H and W (x.mean([2, 3])), checked against values computed here by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "onnx_test_util.hpp"

namespace kuiper::testing {
namespace {

// A chain of nodes: X (1,2,3) is the graph input, Y the output of the last node.
struct Chain {
  onnx::ModelProto model;
  explicit Chain(int opset) {
    model.set_ir_version(7);
    model.add_opset_import()->set_version(opset);
  }
  onnx::NodeProto* Node(const std::string& type, const std::vector<std::string>& inputs,
                        const std::string& output) {
    onnx::NodeProto* node = model.mutable_graph()->add_node();
    node->set_op_type(type);
    node->set_name(output == "Y" ? "the_node" : output);
    for (const std::string& in : inputs) node->add_input(in);
    node->add_output(output);
    return node;
  }
  void Constant(const onnx::TensorProto& t) { *model.mutable_graph()->add_initializer() = t; }
};

// c = float((Gather(Shape(X), [2,1,0]) * 3 + 1 - 4) / 2): Shape (1,2,3) gives
// [1,2,3], gathered [3,2,1], [9,6,3], [10,7,4], [6,3,0], [3,1,0]; then X + c
// along the last axis.
TEST(OnnxShapeArithmetic, ShapeGatherAndIntegerArithmeticFoldToAConstant) {
  Chain c(13);
  *c.model.mutable_graph()->add_input() = ValueInfo("X", {1, 2, 3});
  c.Constant(Ints("idx", {2, 1, 0}));
  c.Constant(Ints("three", {3}));
  c.Constant(Ints("one", {1}));
  c.Constant(Ints("four", {4}));
  c.Constant(Ints("two", {2}));
  c.Node("Shape", {"X"}, "s");
  c.Node("Gather", {"s", "idx"}, "g");
  c.Node("Mul", {"g", "three"}, "m");
  c.Node("Add", {"m", "one"}, "a");
  c.Node("Sub", {"a", "four"}, "d");
  c.Node("Div", {"d", "two"}, "q");
  auto* cast = c.Node("Cast", {"q"}, "f");
  auto* to = cast->add_attribute();
  to->set_name("to");
  to->set_type(onnx::AttributeProto::INT);
  to->set_i(onnx::TensorProto::FLOAT);
  c.Node("Add", {"X", "f"}, "Y");
  *c.model.mutable_graph()->add_output() = ValueInfo("Y", {1, 2, 3});
  const pnnx::Graph graph = ConvertOnnx(c.model);
  const std::vector<float> x = {0.5f, -1.f, 2.f, 4.f, 0.f, -3.f};
  const std::vector<float> want = {3.5f, 0.f, 2.f, 7.f, 1.f, -3.f};
  EXPECT_EQ(MaxAbsDiff(RunGraph(graph, {x}), want), 0.f) << "see docs/onnx.md §1";
}

// ONNX's integer Div truncates toward zero: -7 / 2 = -3 (floor would give -4).
TEST(OnnxShapeArithmetic, IntegerDivTruncatesTowardZero) {
  Chain c(13);
  *c.model.mutable_graph()->add_input() = ValueInfo("X", {1, 2, 2});
  c.Constant(Ints("n", {-7, 7}));
  c.Constant(Ints("two", {2}));
  c.Node("Div", {"n", "two"}, "q");
  auto* cast = c.Node("Cast", {"q"}, "f");
  auto* to = cast->add_attribute();
  to->set_name("to");
  to->set_type(onnx::AttributeProto::INT);
  to->set_i(onnx::TensorProto::FLOAT);
  c.Node("Add", {"X", "f"}, "Y");
  *c.model.mutable_graph()->add_output() = ValueInfo("Y", {1, 2, 2});
  const std::vector<float> x = {0, 0, 1, 1};
  EXPECT_EQ(MaxAbsDiff(RunGraph(ConvertOnnx(c.model), {x}), {-3.f, 3.f, -2.f, 4.f}), 0.f);
}

TEST(OnnxShapeArithmetic, IntegerOverflowIsRefusedNamingTheNode) {
  Chain c(13);
  *c.model.mutable_graph()->add_input() = ValueInfo("X", {1, 2, 2});
  c.Constant(Ints("big", {std::numeric_limits<int64_t>::max()}));
  c.Constant(Ints("one", {1}));
  c.Node("Add", {"big", "one"}, "Y");
  *c.model.mutable_graph()->add_output() = ValueInfo("Y", {1});
  ExpectErrorNamingNode(c.model, "overflows int64");
}

TEST(OnnxShapeArithmetic, GatherIndexOutOfRangeIsRefusedNamingTheNode) {
  Chain c(13);
  *c.model.mutable_graph()->add_input() = ValueInfo("X", {1, 2, 3});
  c.Constant(Ints("idx", {3}));
  c.Node("Shape", {"X"}, "s");
  c.Node("Gather", {"s", "idx"}, "Y");
  *c.model.mutable_graph()->add_output() = ValueInfo("Y", {1});
  ExpectErrorNamingNode(c.model, "index 3 is out of range for 3 values");
}

// With a symbolic batch the shape is known only at run time: Shape stays, and
// the conversion stops (the engine folds Shape at load time only).
TEST(OnnxShapeArithmetic, ShapeOfASymbolicBatchIsNotFolded) {
  Chain c(13);
  *c.model.mutable_graph()->add_input() = ValueInfo("X", {1, 2, 3});
  c.model.mutable_graph()
      ->mutable_input(0)
      ->mutable_type()
      ->mutable_tensor_type()
      ->mutable_shape()
      ->mutable_dim(0)
      ->set_dim_param("batch");
  c.Node("Shape", {"X"}, "Y");
  *c.model.mutable_graph()->add_output() = ValueInfo("Y", {3});
  try {
    ConvertOnnx(c.model);
    FAIL() << "no error";
  } catch (const ConversionError& e) {
    // Not folded: Shape is converted (constant_generators.cpp), and its 1-D
    // output cannot start with the batch, which the engine must follow.
    EXPECT_NE(std::string(e.what()).find("graph input 'X' has a symbolic batch"), std::string::npos)
        << e.what();
  }
}

// ---- ReduceMean ----

// X (1,2,2,3): channel 0 holds 0..5 (mean 2.5), channel 1 holds 6..11 (mean 8.5).
OneNodeModel ReduceMean(const std::vector<int64_t>& axes, int keepdims,
                        const std::vector<int64_t>& out) {
  OneNodeModel m("ReduceMean", 13);
  m.Input("X", {1, 2, 2, 3}).Output("Y", out);
  auto* a = m.node->add_attribute();
  a->set_name("axes");
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t v : axes) a->add_ints(v);
  auto* k = m.node->add_attribute();
  k->set_name("keepdims");
  k->set_type(onnx::AttributeProto::INT);
  k->set_i(keepdims);
  return m;
}

std::vector<float> Twelve() {
  std::vector<float> x(12);
  for (int i = 0; i < 12; ++i) x[i] = static_cast<float>(i);
  return x;
}

TEST(OnnxReduceMean, OverHeightAndWidthWithoutKeepdimsGivesNByC) {
  OneNodeModel m = ReduceMean({2, 3}, 0, {1, 2});
  EXPECT_EQ(MaxAbsDiff(RunGraph(ConvertOnnx(m.model), {Twelve()}), {2.5f, 8.5f}), 0.f);
}

TEST(OnnxReduceMean, NegativeAxesWithKeepdims) {
  OneNodeModel m = ReduceMean({-1, -2}, 1, {1, 2, 1, 1});
  EXPECT_EQ(MaxAbsDiff(RunGraph(ConvertOnnx(m.model), {Twelve()}), {2.5f, 8.5f}), 0.f);
}

TEST(OnnxReduceMean, OverChannelsIsAnOrdinaryReduction) {
  // Not global pooling: torch.mean over dim 1 (lower_reduce.cpp), no longer refused.
  OneNodeModel m = ReduceMean({1}, 1, {1, 1, 2, 3});
  EXPECT_EQ(OperatorTypes(ConvertOnnx(m.model)),
            (std::vector<std::string>{"pnnx.Input", "torch.mean", "pnnx.Output"}));
}

TEST(OnnxReduceMean, AxisOutOfRangeIsRefusedNamingTheNode) {
  OneNodeModel m = ReduceMean({4}, 1, {1, 2, 2, 3});
  ExpectErrorNamingNode(m.model, "axis 4 is out of range for rank 4");
}

}  // namespace
}  // namespace kuiper::testing
