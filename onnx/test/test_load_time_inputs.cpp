// Graph inputs bound at load time (OnnxImportOptions), integer inputs carried
// as float32, and the pooling and Gemm forms ONNX has beyond PyTorch's layers.
// References are hand computations (docs/onnx.md: load-time inputs).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "kuiper/npy.hpp"
#include "onnx_test_util.hpp"

namespace kuiper::testing {
namespace {

NpyArray LtIntArray(const std::vector<int64_t>& shape, const std::vector<int64_t>& values) {
  NpyArray a;
  a.shape = shape;
  a.integer = true;
  a.ints = values;
  a.data.assign(values.begin(), values.end());
  return a;
}

// A scalar graph input: a shape with no dims (ValueInfo leaves it unknown).
void LtMakeScalar(onnx::ModelProto& model, const std::string& name) {
  for (auto& info : *model.mutable_graph()->mutable_input()) {
    if (info.name() == name) info.mutable_type()->mutable_tensor_type()->mutable_shape();
  }
}

void LtSetElemType(onnx::ModelProto& model, const std::string& name, int type) {
  for (auto& info : *model.mutable_graph()->mutable_input()) {
    if (info.name() == name) info.mutable_type()->mutable_tensor_type()->set_elem_type(type);
  }
  for (auto& info : *model.mutable_graph()->mutable_output()) {
    if (info.name() == name) info.mutable_type()->mutable_tensor_type()->set_elem_type(type);
  }
}

// Reshape(x, shape) with `shape` a graph input: x (2,3,2) -> (2,6).
OneNodeModel LtReshapeWithShapeInput() {
  OneNodeModel m("Reshape", 13);
  m.Input("x", {2, 3, 2}).Input("shape", {2}).Output("y", {2, 6});
  LtSetElemType(m.model, "shape", onnx::TensorProto::INT64);
  return m;
}

TEST(LoadTimeInputs, ShapeInputIsBoundFromItsValueAndLeavesTheGraph) {
  OneNodeModel m = LtReshapeWithShapeInput();
  OnnxImportOptions options;
  options.input_values["x"] = FloatArray({2, 3, 2}, Range(12));
  options.input_values["shape"] = LtIntArray({2}, {2, -1});
  std::vector<std::string> bound;
  const pnnx::Graph graph = ConvertOnnx(m.model, options, &bound);
  EXPECT_EQ(bound, std::vector<std::string>{"shape"}) << "see docs/onnx.md: load-time inputs";
  RuntimeGraph runtime(graph, "test");
  runtime.Build();
  ASSERT_EQ(runtime.input_operators().size(), 1u) << "the bound input leaves the engine graph";
  EXPECT_EQ(runtime.input_operators()[0]->output_operand->shapes, (std::vector<int>{2, 3, 2}));
  // Row-major data does not move in a reshape.
  EXPECT_EQ(RunGraph(graph, {Range(12)}), Range(12));
}

TEST(LoadTimeInputs, MissingValueOfAShapeInputIsAnErrorNamingIt) {
  OneNodeModel m = LtReshapeWithShapeInput();
  // Without a declared output shape only the value of `shape` fixes it.
  m.model.mutable_graph()->mutable_output(0)->mutable_type()->mutable_tensor_type()->clear_shape();
  try {
    ConvertOnnx(m.model);
    FAIL() << "no error";
  } catch (const ConversionError& e) {
    EXPECT_NE(std::string(e.what()).find("'shape'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("load time"), std::string::npos) << e.what();
  }
}

// Clip(x, lo, hi) with both bounds graph inputs (the opset 11+ input form):
// the converter asks for them as constants, so they are bound.
TEST(LoadTimeInputs, ClipBoundsGivenAsGraphInputsAreBound) {
  OneNodeModel m("Clip", 13);
  m.Input("x", {1, 5}).Input("lo", {}).Input("hi", {}).Output("y", {1, 5});
  LtMakeScalar(m.model, "lo");
  LtMakeScalar(m.model, "hi");
  OnnxImportOptions options;
  options.input_values["lo"] = FloatArray({}, {-1.f});
  options.input_values["hi"] = FloatArray({}, {2.f});
  std::vector<std::string> bound;
  const pnnx::Graph graph = ConvertOnnx(m.model, options, &bound);
  EXPECT_EQ(bound, (std::vector<std::string>{"lo", "hi"}));
  EXPECT_EQ(RunGraph(graph, {{-3.f, -1.f, 0.5f, 2.f, 7.f}}),
            (std::vector<float>{-1.f, -1.f, 0.5f, 2.f, 2.f}));
}

TEST(LoadTimeInputs, MissingValueOfAWeightInputIsAnErrorNamingIt) {
  OneNodeModel m("Clip", 13);
  m.Input("x", {1, 5}).Input("lo", {}).Output("y", {1, 5});
  LtMakeScalar(m.model, "lo");
  ExpectErrorNamingNode(m.model, "graph input 'lo'");
}

TEST(LoadTimeInputs, RunTimeInputsStayRunTimeInputs) {
  OneNodeModel m("Add", 13);
  m.Input("a", {2, 3}).Input("b", {2, 3}).Output("y", {2, 3});
  OnnxImportOptions options;
  options.input_values["a"] = FloatArray({2, 3}, Range(6));
  options.input_values["b"] = FloatArray({2, 3}, Range(6));
  std::vector<std::string> bound = {"stale"};
  const pnnx::Graph graph = ConvertOnnx(m.model, options, &bound);
  EXPECT_TRUE(bound.empty()) << "an element-wise operand is read at run time";
  EXPECT_EQ(RunGraph(graph, {Range(6), {1, 1, 1, 1, 1, 1}}),
            (std::vector<float>{1, 2, 3, 4, 5, 6}));
}

TEST(LoadTimeInputs, BoundValueOfAnotherShapeThanDeclaredIsAnError) {
  OneNodeModel m = LtReshapeWithShapeInput();
  OnnxImportOptions options;
  options.input_values["shape"] = LtIntArray({3}, {2, 6, 1});
  try {
    ConvertOnnx(m.model, options);
    FAIL() << "no error";
  } catch (const ConversionError& e) {
    EXPECT_NE(std::string(e.what()).find("'shape'"), std::string::npos) << e.what();
  }
}

// ---- integer inputs ----

TEST(IntegerInputs, Int64GraphInputIsCarriedAsFloat) {
  OneNodeModel m("Add", 13);
  m.Input("a", {1, 3}).Input("b", {1, 3}).Output("y", {1, 3});
  LtSetElemType(m.model, "a", onnx::TensorProto::INT64);
  LtSetElemType(m.model, "b", onnx::TensorProto::INT64);
  LtSetElemType(m.model, "y", onnx::TensorProto::INT64);
  const pnnx::Graph graph = ConvertOnnx(m.model);
  RuntimeGraph runtime(graph, "test");
  runtime.Build();
  const RuntimeOperand& a = *runtime.input_operators()[0]->output_operand;
  const RuntimeOperand& b = *runtime.input_operators()[1]->output_operand;
  const auto out = runtime.Forward({ArrayToInput(LtIntArray({1, 3}, {16777216, -5, 7}), a, "a"),
                                    ArrayToInput(LtIntArray({1, 3}, {-16777216, 2, 0}), b, "b")});
  EXPECT_EQ(BatchToValues(out.at(0)), (std::vector<float>{0, -3, 7}));
}

TEST(IntegerInputs, ValueBeyondTwoToThe24IsAnErrorNamingTheInput) {
  OneNodeModel m("Add", 13);
  m.Input("a", {1, 2}).Input("b", {1, 2}).Output("y", {1, 2});
  RuntimeGraph runtime(ConvertOnnx(m.model), "test");
  runtime.Build();
  const RuntimeOperand& a = *runtime.input_operators()[0]->output_operand;
  try {
    ArrayToInput(LtIntArray({1, 2}, {1, 16777217}), a, "the_input");
    FAIL() << "2^24 + 1 has no exact float32";
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("the_input"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("16777217"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(ArrayToInput(LtIntArray({1, 2}, {-16777216, 16777216}), a, "the_input"));
}

TEST(IntegerInputs, BoundInt64KeepsValuesBeyondFloatPrecision) {
  // Slice's ends of INT64_MAX mean "to the end": bound exactly, not via float.
  OneNodeModel m("Slice", 13);
  m.Input("x", {2, 5}).Input("starts", {1}).Input("ends", {1}).Input("axes", {1});
  m.Output("y", {2, 3});
  for (const char* name : {"starts", "ends", "axes"}) {
    LtSetElemType(m.model, name, onnx::TensorProto::INT64);
  }
  OnnxImportOptions options;
  options.input_values["starts"] = LtIntArray({1}, {2});
  options.input_values["ends"] = LtIntArray({1}, {std::numeric_limits<int64_t>::max()});
  options.input_values["axes"] = LtIntArray({1}, {-1});
  std::vector<std::string> bound;
  const pnnx::Graph graph = ConvertOnnx(m.model, options, &bound);
  EXPECT_EQ(bound, (std::vector<std::string>{"starts", "ends", "axes"}));
  EXPECT_EQ(RunGraph(graph, {Range(10)}), (std::vector<float>{2, 3, 4, 7, 8, 9}));
}

// ---- pooling forms (ONNX's definition, computed by hand) ----

OneNodeModel LtPool(const std::string& type, const std::vector<int64_t>& in,
                    const std::vector<int64_t>& out) {
  OneNodeModel m(type, 11);
  m.Input("x", in).Output("y", out);
  return m;
}

void LtSetInt(onnx::NodeProto* node, const std::string& name, int64_t value) {
  auto* attr = node->add_attribute();
  attr->set_name(name);
  attr->set_type(onnx::AttributeProto::INT);
  attr->set_i(value);
}

void LtSetInts(onnx::NodeProto* node, const std::string& name, const std::vector<int64_t>& values) {
  auto* attr = node->add_attribute();
  attr->set_name(name);
  attr->set_type(onnx::AttributeProto::INTS);
  for (int64_t v : values) attr->add_ints(v);
}

void LtSetString(onnx::NodeProto* node, const std::string& name, const std::string& value) {
  auto* attr = node->add_attribute();
  attr->set_name(name);
  attr->set_type(onnx::AttributeProto::STRING);
  attr->set_s(value);
}

std::vector<float> LtRun(const onnx::ModelProto& model, const std::vector<float>& x) {
  return RunGraph(ConvertOnnx(model), {x});
}

TEST(OnnxPooling, MaxPool1d) {
  OneNodeModel m = LtPool("MaxPool", {1, 1, 5}, {1, 1, 4});
  LtSetInts(m.node, "kernel_shape", {2});
  EXPECT_EQ(LtRun(m.model, {1, 3, 2, 5, 4}), (std::vector<float>{3, 3, 5, 5}));
}

TEST(OnnxPooling, MaxPoolSameUpperPadsTheEnd) {
  OneNodeModel m = LtPool("MaxPool", {1, 1, 3, 3}, {1, 1, 3, 3});
  LtSetInts(m.node, "kernel_shape", {2, 2});
  LtSetString(m.node, "auto_pad", "SAME_UPPER");
  EXPECT_EQ(LtRun(m.model, {1, 2, 3, 4, 5, 6, 7, 8, 9}),
            (std::vector<float>{5, 6, 6, 8, 9, 9, 8, 9, 9}));
}

TEST(OnnxPooling, MaxPoolSameLowerPadsTheStart) {
  OneNodeModel m = LtPool("MaxPool", {1, 1, 3, 3}, {1, 1, 3, 3});
  LtSetInts(m.node, "kernel_shape", {2, 2});
  LtSetString(m.node, "auto_pad", "SAME_LOWER");
  EXPECT_EQ(LtRun(m.model, {1, 2, 3, 4, 5, 6, 7, 8, 9}),
            (std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8, 9}));
}

TEST(OnnxPooling, AveragePoolAsymmetricPadsExcludingPad) {
  OneNodeModel m = LtPool("AveragePool", {1, 1, 3, 3}, {1, 1, 3, 3});
  LtSetInts(m.node, "kernel_shape", {2, 2});
  LtSetInts(m.node, "pads", {0, 0, 1, 1});  // top, left, bottom, right
  EXPECT_EQ(LtRun(m.model, {1, 2, 3, 4, 5, 6, 7, 8, 9}),
            (std::vector<float>{3, 4, 4.5f, 6, 7, 7.5f, 7.5f, 8.5f, 9}));
}

TEST(OnnxPooling, AveragePoolAsymmetricPadsCountingPad) {
  OneNodeModel m = LtPool("AveragePool", {1, 1, 3, 3}, {1, 1, 3, 3});
  LtSetInts(m.node, "kernel_shape", {2, 2});
  LtSetInts(m.node, "pads", {0, 0, 1, 1});
  LtSetInt(m.node, "count_include_pad", 1);
  EXPECT_EQ(LtRun(m.model, {1, 2, 3, 4, 5, 6, 7, 8, 9}),
            (std::vector<float>{3, 4, 2.25f, 6, 7, 3.75f, 3.75f, 4.25f, 2.25f}));
}

TEST(OnnxPooling, PadsLargerThanHalfTheKernel) {
  // kernel 3, pads 2 each side (PyTorch allows at most 1): windows [-2,0] .. [2,4].
  OneNodeModel max = LtPool("MaxPool", {1, 1, 3}, {1, 1, 5});
  LtSetInts(max.node, "kernel_shape", {3});
  LtSetInts(max.node, "pads", {2, 2});
  EXPECT_EQ(LtRun(max.model, {1, 2, 3}), (std::vector<float>{1, 2, 3, 3, 3}));
  OneNodeModel avg = LtPool("AveragePool", {1, 1, 3}, {1, 1, 5});
  LtSetInts(avg.node, "kernel_shape", {3});
  LtSetInts(avg.node, "pads", {2, 2});
  EXPECT_EQ(LtRun(avg.model, {1, 2, 3}), (std::vector<float>{1, 1.5f, 2, 2.5f, 3}));
  LtSetInt(avg.node, "count_include_pad", 1);
  const std::vector<float> got = LtRun(avg.model, {1, 2, 3});
  const std::vector<float> want = {1.f / 3, 1, 2, 5.f / 3, 1};
  EXPECT_LE(MaxAbsDiff(got, want), 1e-6f);
}

TEST(OnnxPooling, SymmetricPoolingKeepsPyTorchsLayer) {
  OneNodeModel m = LtPool("MaxPool", {1, 1, 4, 4}, {1, 1, 2, 2});
  LtSetInts(m.node, "kernel_shape", {2, 2});
  LtSetInts(m.node, "strides", {2, 2});
  EXPECT_EQ(OperatorTypes(ConvertOnnx(m.model)),
            (std::vector<std::string>{"pnnx.Input", "nn.MaxPool2d", "pnnx.Output"}));
}

TEST(OnnxPooling, ThreeDPoolingIsAnErrorNamingTheNode) {
  OneNodeModel m = LtPool("MaxPool", {1, 1, 2, 2, 2}, {1, 1, 1, 1, 1});
  LtSetInts(m.node, "kernel_shape", {2, 2, 2});
  ExpectErrorNamingNode(m.model, "3-D pooling");
}

TEST(OnnxPooling, MaxPoolIndicesOutputIsAnErrorNamingTheNode) {
  OneNodeModel m = LtPool("MaxPool", {1, 1, 4, 4}, {1, 1, 2, 2});
  LtSetInts(m.node, "kernel_shape", {2, 2});
  LtSetInts(m.node, "strides", {2, 2});
  m.Output("indices", {1, 1, 2, 2});
  LtSetElemType(m.model, "indices", onnx::TensorProto::INT64);
  ExpectErrorNamingNode(m.model, "Indices");
}

// ---- Gemm ----

TEST(OnnxGemm, TransAWithAlphaBetaAndVectorBias) {
  // A (3,2), transA: A^T (2,3); B (3,2); C (2). Y = 2 * A^T B + 0.5 * C.
  OneNodeModel m("Gemm", 13);
  m.Input("a", {3, 2});
  m.Constant(FloatTensor("b", {3, 2}, {1, 0, 0, 1, 1, 1}));
  m.Constant(FloatTensor("c", {2}, {10, 20}));
  m.Output("y", {2, 2});
  LtSetInt(m.node, "transA", 1);
  auto* alpha = m.node->add_attribute();
  alpha->set_name("alpha");
  alpha->set_type(onnx::AttributeProto::FLOAT);
  alpha->set_f(2.f);
  auto* beta = m.node->add_attribute();
  beta->set_name("beta");
  beta->set_type(onnx::AttributeProto::FLOAT);
  beta->set_f(0.5f);
  // A = [[1,2],[3,4],[5,6]]: A^T = [[1,3,5],[2,4,6]]; A^T B = [[6,8],[8,10]].
  EXPECT_EQ(LtRun(m.model, {1, 2, 3, 4, 5, 6}), (std::vector<float>{17, 26, 21, 30}));
}

TEST(OnnxGemm, MatrixBias) {
  OneNodeModel m("Gemm", 13);
  m.Input("a", {2, 2});
  m.Constant(FloatTensor("b", {2, 2}, {1, 0, 0, 1}));
  m.Constant(FloatTensor("c", {2, 2}, {100, 200, 300, 400}));
  m.Output("y", {2, 2});
  EXPECT_EQ(LtRun(m.model, {1, 2, 3, 4}), (std::vector<float>{101, 202, 303, 404}));
}

}  // namespace
}  // namespace kuiper::testing
