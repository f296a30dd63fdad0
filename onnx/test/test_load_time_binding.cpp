// The graph inputs bound at load time are decided before the conversion
// (onnx/src/load_time_inputs.cpp): a lowering declares the inputs it reads as
// constants, and the importer binds the graph inputs behind them from their
// values first, so that the model converts once. References are hand
// computations (docs/onnx.md §7).
#include <gtest/gtest.h>

#include <sstream>

#include "kuiper/layer.hpp"
#include "kuiper/unary_ops.hpp"
#include "load_time_inputs.hpp"
#include "onnx_test_util.hpp"

namespace kuiper::testing {
namespace {

// Conv(x, W) with W a graph input: x (1,1,3,3) = 0..8, W (1,1,2,2) = (1,0,0,1),
// so y(i,j) = x(i,j) + x(i+1,j+1) = (0+4, 1+5, 3+7, 4+8).
OneNodeModel LbConvWithWeightInput() {
  OneNodeModel m("Conv", 13);
  m.Input("x", {1, 1, 3, 3}).Input("W", {1, 1, 2, 2}).Output("y", {1, 1, 2, 2});
  return m;
}
const std::vector<float> kLbConvExpected = {4, 6, 10, 12};

OnnxImportOptions LbConvValues() {
  OnnxImportOptions options;
  options.input_values["x"] = FloatArray({1, 1, 3, 3}, Range(9));
  options.input_values["W"] = FloatArray({1, 1, 2, 2}, {1, 0, 0, 1});
  return options;
}

// The pre-pass alone binds W: the model it returns converts with no values at
// all, so nothing is left for the conversion to ask for.
TEST(LoadTimeBinding, ConvWeightInputIsBoundBeforeTheConversion) {
  const OneNodeModel m = LbConvWithWeightInput();
  const onnx_import::LoadTimeBinding binding =
      onnx_import::BindLoadTimeInputs(m.model, LbConvValues());
  EXPECT_EQ(binding.bound, std::vector<std::string>{"W"}) << "x is read at run time";
  EXPECT_EQ(RunGraph(ConvertOnnx(binding.model), {Range(9)}), kLbConvExpected);
}

TEST(LoadTimeBinding, ConvWeightInputGivenByValueConvertsAndRuns) {
  const OneNodeModel m = LbConvWithWeightInput();
  std::vector<std::string> bound;
  const pnnx::Graph graph = ConvertOnnx(m.model, LbConvValues(), &bound);
  EXPECT_EQ(bound, std::vector<std::string>{"W"});
  EXPECT_EQ(RunGraph(graph, {Range(9)}), kLbConvExpected);
}

TEST(LoadTimeBinding, ConvWeightInputWithoutAValueIsAnErrorNamingTheInput) {
  const OneNodeModel m = LbConvWithWeightInput();
  OnnxImportOptions options;
  options.input_values["x"] = FloatArray({1, 1, 3, 3}, Range(9));
  try {
    ConvertOnnx(m.model, options);
    FAIL() << "no error";
  } catch (const ConversionError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("it is graph input 'W'"), std::string::npos) << message;
    EXPECT_NE(message.find("give its value (kuiper run: its .npy) to bind it"), std::string::npos)
        << message;
  }
}

// Range(0, Cast(n) - 1, 1) + x, HannWindow's expansion: Range's limit is
// computed from graph input n, which the walk back from Range finds. n = 4
// gives limit 3, the range (0, 1, 2); x stays a run-time input.
onnx::ModelProto LbRangeFromCastSub() {
  onnx::ModelProto model;
  model.set_ir_version(7);
  model.add_opset_import()->set_version(13);
  auto* graph = model.mutable_graph();
  *graph->add_input() = ValueInfo("n", {});
  auto* n_type = graph->mutable_input(0)->mutable_type()->mutable_tensor_type();
  n_type->set_elem_type(onnx::TensorProto::INT64);
  n_type->mutable_shape();  // a scalar: a shape of no dims
  *graph->add_input() = ValueInfo("x", {3});
  *graph->add_initializer() = FloatTensor("zero", {}, {0.f});
  *graph->add_initializer() = FloatTensor("one", {}, {1.f});
  kuiper::testing::SetInt(AddNode(graph, "Cast", {"n"}, "size"), "to", onnx::TensorProto::FLOAT);
  AddNode(graph, "Sub", {"size", "one"}, "limit");
  AddNode(graph, "Range", {"zero", "limit", "one"}, "r");
  AddNode(graph, "Add", {"x", "r"}, "y");
  *graph->add_output() = ValueInfo("y", {3});
  return model;
}

OnnxImportOptions LbRangeValues() {
  OnnxImportOptions options;
  NpyArray n;
  n.integer = true;
  n.ints = {4};
  n.data = {4.f};
  options.input_values["n"] = n;
  options.input_values["x"] = FloatArray({3}, {10, 20, 30});
  return options;
}

TEST(LoadTimeBinding, InputBehindCastSubRangeLimitIsFound) {
  const onnx_import::LoadTimeBinding binding =
      onnx_import::BindLoadTimeInputs(LbRangeFromCastSub(), LbRangeValues());
  EXPECT_EQ(binding.bound, std::vector<std::string>{"n"});
}

TEST(LoadTimeBinding, InputBehindCastSubRangeLimitConvertsAndRuns) {
  std::vector<std::string> bound;
  const pnnx::Graph graph = ConvertOnnx(LbRangeFromCastSub(), LbRangeValues(), &bound);
  EXPECT_EQ(bound, std::vector<std::string>{"n"});
  EXPECT_EQ(RunGraph(graph, {{10, 20, 30}}), (std::vector<float>{10, 21, 32}));
}

TEST(LoadTimeBinding, InputBehindRangeLimitWithoutAValueIsNamed) {
  OnnxImportOptions options = LbRangeValues();
  options.input_values.erase("n");
  try {
    ConvertOnnx(LbRangeFromCastSub(), options);
    FAIL() << "no error";
  } catch (const ConversionError& e) {
    EXPECT_NE(std::string(e.what()).find("computed from graph input 'n'"), std::string::npos)
        << e.what();
  }
}

// Slice(x, 0, Shape(x)[1] / 2) on axis 1: the end is computed from x's shape
// alone, fixed at load time, so x is not bound although its value is given.
// x (2,4) = 0..7 keeps its first two columns.
TEST(LoadTimeBinding, ConstantFromTheShapeOfARunTimeInputLeavesItRunTime) {
  onnx::ModelProto model;
  model.set_ir_version(7);
  model.add_opset_import()->set_version(13);
  auto* graph = model.mutable_graph();
  *graph->add_input() = ValueInfo("x", {2, 4});
  *graph->add_initializer() = Ints("index", {1});
  *graph->add_initializer() = Ints("two", {2});
  *graph->add_initializer() = Ints("start", {0});
  *graph->add_initializer() = Ints("axis", {1});
  AddNode(graph, "Shape", {"x"}, "s");
  AddNode(graph, "Gather", {"s", "index"}, "width");
  AddNode(graph, "Div", {"width", "two"}, "end");
  AddNode(graph, "Slice", {"x", "start", "end", "axis"}, "y");
  *graph->add_output() = ValueInfo("y", {2, 2});
  OnnxImportOptions options;
  options.input_values["x"] = FloatArray({2, 4}, Range(8));
  std::vector<std::string> bound = {"stale"};
  const pnnx::Graph converted = ConvertOnnx(model, options, &bound);
  EXPECT_TRUE(bound.empty());
  EXPECT_EQ(RunGraph(converted, {Range(8)}), (std::vector<float>{0, 1, 4, 5}));
}

// The table's two readers share IsUnaryLayerForm: a layer row's form is a
// PNNX layer type with its own creator, and every PNNX type of an expression
// row is registered (as the expression layer, kuiper/src/layer/unary_ops.cpp).
TEST(UnaryTable, LayerRowsNameLayersAndExpressionRowsRegisterTheirTypes) {
  struct Row {
    const char* pnnx_types;
    const char* form;
  };
  const Row rows[] = {
#define KUIPER_UNARY(onnx_type, pnnx_types, form) {pnnx_types, form},
#include "kuiper/unary_ops.def"
#undef KUIPER_UNARY
  };
  int layers = 0;
  for (const Row& row : rows) {
    if (IsUnaryLayerForm(row.form)) {
      ++layers;
      EXPECT_TRUE(LayerRegisterer::HasCreator(row.form)) << row.form;
      continue;
    }
    std::istringstream types(row.pnnx_types);
    for (std::string type; types >> type;) {
      EXPECT_TRUE(LayerRegisterer::HasCreator(type)) << type << " of " << row.form;
    }
  }
  EXPECT_GT(layers, 0) << "the table's header names layer rows (nn.ReLU, ...)";
}

}  // namespace
}  // namespace kuiper::testing
