// Identity, Clip, HardSigmoid and HardSwish: the nodes torchvision's
// resnet18/squeezenet (Identity), mobilenet_v2 (Clip as ReLU6) and
// mobilenet_v3 (HardSigmoid, HardSwish) export, each checked against the ONNX
// operator definition computed here, and their bad attributes refused naming
// the node (docs/onnx.md §3).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "onnx_test_util.hpp"

namespace kuiper::testing {
namespace {

constexpr float kInfinity = std::numeric_limits<float>::infinity();

// X (2,3,4) from -4 to about 4.6: both sides of every bound used below.
const std::vector<int64_t> kShape = {2, 3, 4};
std::vector<float> Values() { return Iota(24, -4.f, 0.4f); }

void SetFloat(onnx::NodeProto* node, const std::string& name, float value) {
  auto* attr = node->add_attribute();
  attr->set_name(name);
  attr->set_type(onnx::AttributeProto::FLOAT);
  attr->set_f(value);
}

bool HasOperator(const pnnx::Graph& graph, const std::string& type) {
  const std::vector<std::string> types = OperatorTypes(graph);
  return std::find(types.begin(), types.end(), type) != types.end();
}

std::vector<float> Clamped(float lo, float hi) {
  std::vector<float> y;
  for (float x : Values()) y.push_back(std::min(std::max(x, lo), hi));
  return y;
}

onnx::TensorProto Scalar(const std::string& name, float value) {
  return FloatTensor(name, {}, {value});
}

// ---- Identity ----

// torch.onnx.export shares equal initializers through Identity nodes: here the
// bias of a 1x1 Conv is Identity(B). Before folding, this stopped the import
// with "constant 'B' of shape (2) differs along the batch dimension".
TEST(OnnxIdentity, OfAnInitializerIsThatConstantAsAConvBias) {
  onnx::ModelProto model;
  model.set_ir_version(7);
  model.add_opset_import()->set_version(13);
  onnx::GraphProto* g = model.mutable_graph();
  *g->add_input() = ValueInfo("X", {1, 2, 2, 2});
  *g->add_initializer() = FloatTensor("W", {2, 2, 1, 1}, {1.f, 2.f, -1.f, 0.5f});
  *g->add_initializer() = FloatTensor("B", {2}, {0.25f, -3.f});
  onnx::NodeProto* identity = g->add_node();
  identity->set_op_type("Identity");
  identity->set_name("the_node");
  identity->add_input("B");
  identity->add_output("B_shared");
  onnx::NodeProto* conv = g->add_node();
  conv->set_op_type("Conv");
  conv->set_name("conv");
  for (const char* in : {"X", "W", "B_shared"}) conv->add_input(in);
  conv->add_output("Y");
  *g->add_output() = ValueInfo("Y", {1, 2, 2, 2});
  const pnnx::Graph graph = ConvertOnnx(model);
  EXPECT_EQ(OperatorTypes(graph),
            (std::vector<std::string>{"pnnx.Input", "nn.Conv2d", "pnnx.Output"}));
  const std::vector<float> x = {1, 2, 3, 4, -1, -2, -3, -4};
  // y[o][p] = W[o][0] x[0][p] + W[o][1] x[1][p] + B[o]
  std::vector<float> want;
  for (int o = 0; o < 2; ++o) {
    const float w0 = o == 0 ? 1.f : -1.f, w1 = o == 0 ? 2.f : 0.5f, b = o == 0 ? 0.25f : -3.f;
    for (int p = 0; p < 4; ++p) want.push_back(w0 * x[p] + w1 * x[4 + p] + b);
  }
  EXPECT_EQ(MaxAbsDiff(RunGraph(graph, {x}), want), 0.f) << "see docs/onnx.md §1 (Identity)";
}

// Identity of a computed value adds no operator: its readers use the same operand.
TEST(OnnxIdentity, OfATensorIsTheSameOperand) {
  OneNodeModel m("Identity", 13);
  m.Input("X", kShape).Output("T", kShape);
  onnx::NodeProto* relu = m.model.mutable_graph()->add_node();
  relu->set_op_type("Relu");
  relu->add_input("T");
  relu->add_output("Y");
  m.model.mutable_graph()->mutable_output(0)->set_name("Y");
  const pnnx::Graph graph = ConvertOnnx(m.model);
  EXPECT_EQ(OperatorTypes(graph),
            (std::vector<std::string>{"pnnx.Input", "nn.ReLU", "pnnx.Output"}));
  EXPECT_EQ(MaxAbsDiff(RunGraph(graph, {Values()}), Clamped(0.f, kInfinity)), 0.f);
}

// A graph output gets its own operand: the copy "@0".
TEST(OnnxIdentity, AsTheGraphOutputCopiesItsInput) {
  OneNodeModel m("Identity", 13);
  m.Input("X", kShape).Output("Y", kShape);
  EXPECT_EQ(MaxAbsDiff(RunGraph(ConvertOnnx(m.model), {Values()}), Values()), 0.f);
}

TEST(OnnxIdentity, WithTwoInputsIsRefusedNamingTheNode) {
  OneNodeModel m("Identity", 13);
  m.Input("X", kShape).Input("Z", kShape).Output("Y", kShape);
  ExpectErrorNamingNode(m.model, "needs 1 input and 1 output, has 2 and 1");
}

// ---- Clip ----

// Opset 6..10: min and max are attributes.
TEST(OnnxClip, AttributeFormClampsBothSides) {
  OneNodeModel m("Clip", 6);
  m.Input("X", kShape).Output("Y", kShape);
  SetFloat(m.node, "min", -0.5f);
  SetFloat(m.node, "max", 1.25f);
  const pnnx::Graph graph = ConvertOnnx(m.model);
  EXPECT_TRUE(HasOperator(graph, "torch.clamp"));
  EXPECT_EQ(MaxAbsDiff(RunGraph(graph, {Values()}), Clamped(-0.5f, 1.25f)), 0.f);
}

// ONNX's defaults are the float range: no attribute, no clamping.
TEST(OnnxClip, AttributeFormWithoutBoundsKeepsEveryValue) {
  OneNodeModel m("Clip", 6);
  m.Input("X", kShape).Output("Y", kShape);
  EXPECT_EQ(MaxAbsDiff(RunGraph(ConvertOnnx(m.model), {Values()}), Values()), 0.f);
}

// PyTorch's ReLU6 at opset 11+: Clip(x, 0, 6) with the bounds as inputs.
TEST(OnnxClip, InputFormZeroToSixIsReLU6) {
  OneNodeModel m("Clip", 13);
  m.Input("X", kShape).Constant(Scalar("lo", 0.f)).Constant(Scalar("hi", 6.f)).Output("Y", kShape);
  std::vector<float> x = Values();
  for (float& v : x) v *= 2;  // -8 .. 9: beyond 6 too
  const pnnx::Graph graph = ConvertOnnx(m.model);
  EXPECT_TRUE(HasOperator(graph, "nn.ReLU6"));
  std::vector<float> want;
  for (float v : x) want.push_back(std::min(std::max(v, 0.f), 6.f));
  EXPECT_EQ(MaxAbsDiff(RunGraph(graph, {x}), want), 0.f);
}

TEST(OnnxClip, InputFormWithMinOnlyIsReLUAtZero) {
  OneNodeModel m("Clip", 11);
  m.Input("X", kShape).Constant(Scalar("lo", 0.f)).Output("Y", kShape);
  const pnnx::Graph graph = ConvertOnnx(m.model);
  EXPECT_TRUE(HasOperator(graph, "nn.ReLU"));
  EXPECT_EQ(MaxAbsDiff(RunGraph(graph, {Values()}), Clamped(0.f, kInfinity)), 0.f);
}

// An empty input name marks an absent min: only max bounds.
TEST(OnnxClip, InputFormWithMaxOnlyClampsAbove) {
  OneNodeModel m("Clip", 13);
  m.Input("X", kShape);
  m.node->add_input("");
  m.Constant(Scalar("hi", 0.25f)).Output("Y", kShape);
  EXPECT_EQ(MaxAbsDiff(RunGraph(ConvertOnnx(m.model), {Values()}), Clamped(-kInfinity, 0.25f)),
            0.f);
}

// ONNX: "When 'min' is greater than 'max', the clip operator sets all the
// 'input' values to the value of 'max'."
TEST(OnnxClip, MinAboveMaxGivesMaxEverywhere) {
  OneNodeModel m("Clip", 13);
  m.Input("X", kShape).Constant(Scalar("lo", 1.f)).Constant(Scalar("hi", -1.f)).Output("Y", kShape);
  EXPECT_EQ(MaxAbsDiff(RunGraph(ConvertOnnx(m.model), {Values()}), std::vector<float>(24, -1.f)),
            0.f);
}

TEST(OnnxClip, ComputedMinIsRefusedNamingTheNode) {
  OneNodeModel m("Clip", 13);
  m.Input("X", kShape).Input("lo", {1}).Output("Y", kShape);
  ExpectErrorNamingNode(m.model, "input 1 must be a constant");
}

TEST(OnnxClip, MinThatIsNotAScalarIsRefusedNamingTheNode) {
  OneNodeModel m("Clip", 13);
  m.Input("X", kShape).Constant(FloatTensor("lo", {1}, {0.f})).Output("Y", kShape);
  ExpectErrorNamingNode(m.model, "min must be a scalar, has shape (1)");
}

TEST(OnnxClip, AttributeAtOpset11IsRefusedNamingTheNode) {
  OneNodeModel m("Clip", 11);
  m.Input("X", kShape).Output("Y", kShape);
  SetFloat(m.node, "max", 6.f);
  ExpectErrorNamingNode(m.model, "opset 11 Clip takes 'max' as an input");
}

TEST(OnnxClip, IntegerAttributeIsRefusedNamingTheNode) {
  OneNodeModel m("Clip", 6);
  m.Input("X", kShape).Output("Y", kShape);
  auto* attr = m.node->add_attribute();
  attr->set_name("min");
  attr->set_type(onnx::AttributeProto::INT);
  attr->set_i(0);
  ExpectErrorNamingNode(m.model, "attribute 'min' must be a float");
}

TEST(OnnxClip, InputsAtOpset6AreRefusedNamingTheNode) {
  OneNodeModel m("Clip", 6);
  m.Input("X", kShape).Constant(Scalar("lo", 0.f)).Output("Y", kShape);
  ExpectErrorNamingNode(m.model, "opset 6 Clip takes 1 input");
}

// ---- HardSigmoid, HardSwish ----

std::vector<float> HardSigmoid(float alpha, float beta) {
  std::vector<float> y;
  for (float x : Values()) {
    y.push_back(static_cast<float>(std::clamp(double{alpha} * x + beta, 0.0, 1.0)));
  }
  return y;
}

// ONNX's defaults alpha=0.2, beta=0.5: saturates at x = -2.5 and 2.5.
TEST(OnnxHardSigmoid, DefaultsAreAlpha02Beta05) {
  OneNodeModel m("HardSigmoid", 13);
  m.Input("X", kShape).Output("Y", kShape);
  EXPECT_LE(MaxAbsDiff(RunGraph(ConvertOnnx(m.model), {Values()}), HardSigmoid(0.2f, 0.5f)), 1e-7f);
}

TEST(OnnxHardSigmoid, AlphaAndBetaAreRead) {
  OneNodeModel m("HardSigmoid", 6);
  m.Input("X", kShape).Output("Y", kShape);
  SetFloat(m.node, "alpha", 0.3f);
  SetFloat(m.node, "beta", 0.25f);
  EXPECT_LE(MaxAbsDiff(RunGraph(ConvertOnnx(m.model), {Values()}), HardSigmoid(0.3f, 0.25f)),
            1e-7f);
}

// PyTorch's Hardsigmoid exports alpha=1/6, beta=0.5: the engine's own layer.
TEST(OnnxHardSigmoid, PyTorchsParametersAreNnHardsigmoid) {
  OneNodeModel m("HardSigmoid", 13);
  m.Input("X", kShape).Output("Y", kShape);
  SetFloat(m.node, "alpha", 1.f / 6.f);
  SetFloat(m.node, "beta", 0.5f);
  const pnnx::Graph graph = ConvertOnnx(m.model);
  EXPECT_TRUE(HasOperator(graph, "nn.Hardsigmoid"));
  EXPECT_LE(MaxAbsDiff(RunGraph(graph, {Values()}), HardSigmoid(1.f / 6.f, 0.5f)), 1e-7f);
}

TEST(OnnxHardSigmoid, AlphaOfAnotherTypeIsRefusedNamingTheNode) {
  OneNodeModel m("HardSigmoid", 13);
  m.Input("X", kShape).Output("Y", kShape);
  auto* attr = m.node->add_attribute();
  attr->set_name("alpha");
  attr->set_type(onnx::AttributeProto::FLOATS);
  attr->add_floats(0.2f);
  ExpectErrorNamingNode(m.model, "attribute 'alpha' must be a float");
}

TEST(OnnxHardSigmoid, NaNBetaIsRefusedNamingTheNode) {
  OneNodeModel m("HardSigmoid", 13);
  m.Input("X", kShape).Output("Y", kShape);
  SetFloat(m.node, "beta", std::numeric_limits<float>::quiet_NaN());
  ExpectErrorNamingNode(m.model, "attribute 'beta' is NaN");
}

// HardSwish(x) = x * max(0, min(1, x/6 + 1/2)) (opset 14).
TEST(OnnxHardSwish, IsXTimesHardSigmoidOfX) {
  OneNodeModel m("HardSwish", 14);
  m.Input("X", kShape).Output("Y", kShape);
  std::vector<float> want;
  for (float x : Values()) {
    want.push_back(static_cast<float>(x * std::clamp(x / 6.0 + 0.5, 0.0, 1.0)));
  }
  EXPECT_LE(MaxAbsDiff(RunGraph(ConvertOnnx(m.model), {Values()}), want), 1e-6f);
}

}  // namespace
}  // namespace kuiper::testing
