// Constant folding: Expand, Concat, Cast, Reshape and Unsqueeze on constants
// are evaluated during conversion (none of them is an engine operator), and
// the folded value is checked by adding it to an input: Y = X + folded.
#include <gtest/gtest.h>

#include "onnx_test_util.hpp"

namespace kuiper::testing {
namespace {

onnx::TensorProto IntTensor(const std::string& name, const std::vector<int64_t>& shape,
                            const std::vector<int64_t>& values) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(onnx::TensorProto::INT64);
  for (int64_t d : shape) t.add_dims(d);
  for (int64_t v : values) t.add_int64_data(v);
  return t;
}

// X (2,3) + c, where `nodes` compute "c" from `constants` alone.
class FoldedModel {
 public:
  FoldedModel() {
    model_.set_ir_version(7);
    model_.add_opset_import()->set_version(13);
    *graph()->add_input() = ValueInfo("X", {2, 3});
    *graph()->add_output() = ValueInfo("Y", {2, 3});
  }
  FoldedModel& Constant(const onnx::TensorProto& tensor) {
    *graph()->add_initializer() = tensor;
    return *this;
  }
  onnx::NodeProto& Node(const std::string& type, const std::vector<std::string>& inputs,
                        const std::string& output) {
    onnx::NodeProto* node = graph()->add_node();
    node->set_op_type(type);
    node->set_name(output + "_node");
    for (const std::string& input : inputs) node->add_input(input);
    node->add_output(output);
    return *node;
  }
  // Adds Y = X + c, converts, and returns Y for X = 0.
  std::vector<float> FoldedValues(std::vector<std::string>* types = nullptr) {
    Node("Add", {"X", "c"}, "Y");
    const pnnx::Graph graph = ConvertOnnx(model_);
    if (types) *types = OperatorTypes(graph);
    return RunGraph(graph, {std::vector<float>(6, 0.f)});
  }
  const onnx::ModelProto& model() const { return model_; }

 private:
  onnx::GraphProto* graph() { return model_.mutable_graph(); }
  onnx::ModelProto model_;
};

TEST(ConstantFolding, ExpandRepeatsARowAndLeavesNoOperator) {
  FoldedModel m;
  m.Constant(FloatTensor("row", {1, 3}, {1, 2, 3})).Constant(IntTensor("shape", {2}, {2, 3}));
  m.Node("Expand", {"row", "shape"}, "c");
  std::vector<std::string> types;
  EXPECT_EQ(m.FoldedValues(&types), (std::vector<float>{1, 2, 3, 1, 2, 3}));
  EXPECT_EQ(types, (std::vector<std::string>{"pnnx.Input", "pnnx.Attribute", "pnnx.Expression",
                                             "pnnx.Output"}));
}

TEST(ConstantFolding, ConcatJoinsBlocksAlongItsAxisAndCastMakesFloats) {
  FoldedModel m;
  m.Constant(IntTensor("a", {2, 1}, {0, 3})).Constant(IntTensor("b", {2, 2}, {1, 2, 4, 5}));
  auto* axis = m.Node("Concat", {"a", "b"}, "ints").add_attribute();
  axis->set_name("axis");
  axis->set_type(onnx::AttributeProto::INT);
  axis->set_i(-1);
  auto* to = m.Node("Cast", {"ints"}, "c").add_attribute();
  to->set_name("to");
  to->set_type(onnx::AttributeProto::INT);
  to->set_i(onnx::TensorProto::FLOAT);
  EXPECT_EQ(m.FoldedValues(), (std::vector<float>{0, 1, 2, 3, 4, 5}));
}

TEST(ConstantFolding, ReshapeAndUnsqueezeKeepTheRowMajorValues) {
  FoldedModel m;
  m.Constant(FloatTensor("v", {3}, {7, 8, 9})).Constant(IntTensor("axes", {1}, {0}));
  m.Node("Unsqueeze", {"v", "axes"}, "row");  // (1,3), broadcast by Add
  m.Node("Reshape", {"row", "row_shape"}, "c");
  m.Constant(IntTensor("row_shape", {2}, {1, 3}));
  EXPECT_EQ(m.FoldedValues(), (std::vector<float>{7, 8, 9, 7, 8, 9}));
}

TEST(ConstantFolding, ANodeReadingAComputedValueIsNotFolded) {
  FoldedModel m;
  m.Constant(IntTensor("shape", {2}, {2, 3}));
  m.Node("Expand", {"X", "shape"}, "c");
  EXPECT_THROW(m.FoldedValues(), UnsupportedOperatorError);
}

}  // namespace
}  // namespace kuiper::testing
