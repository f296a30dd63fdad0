// Slice with negative steps, and graphs whose values are known at load time:
// Range and ConstantOfShape folded, Shape as a graph output or feeding shape
// arithmetic, a graph with no run-time input at all, float64 values carried
// as float32, and Constant given as numbers. The references are hand
// computations (docs/onnx.md §1 and §3).
#include <gtest/gtest.h>

#include <limits>

#include "kuiper/npy.hpp"
#include "onnx_test_util.hpp"

namespace kuiper::testing {
namespace {

constexpr int64_t kLcMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kLcMin = std::numeric_limits<int64_t>::min();

// Slice of X (1,2,7) = 0..13 on its last axis.
OneNodeModel LcSliceRows(int64_t start, int64_t end, int64_t step, int64_t out) {
  OneNodeModel m("Slice", 13);
  m.Input("X", {1, 2, 7})
      .Constant(Ints("starts", {start}))
      .Constant(Ints("ends", {end}))
      .Constant(Ints("axes", {2}))
      .Constant(Ints("steps", {step}))
      .Output("Y", {1, 2, out});
  return m;
}

// A scalar constant of ONNX type `type` holding `value`.
onnx::TensorProto LcScalar(const std::string& name, int type, double value) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(type);
  if (type == onnx::TensorProto::FLOAT) t.add_float_data(static_cast<float>(value));
  if (type == onnx::TensorProto::INT32) t.add_int32_data(static_cast<int32_t>(value));
  if (type == onnx::TensorProto::INT64) t.add_int64_data(static_cast<int64_t>(value));
  return t;
}

void LcSetType(onnx::ModelProto& model, const std::string& name, int type) {
  auto* graph = model.mutable_graph();
  for (auto* list : {graph->mutable_input(), graph->mutable_output()}) {
    for (auto& info : *list) {
      if (info.name() == name) info.mutable_type()->mutable_tensor_type()->set_elem_type(type);
    }
  }
}

// The output has no declared shape: it is known once the node is folded.
void LcUndeclaredOutput(onnx::ModelProto& model) {
  model.mutable_graph()->mutable_output(0)->mutable_type()->mutable_tensor_type()->clear_shape();
}

// ---- Slice with negative steps ----

// start 5, end 0, step -1: elements 5, 4, 3, 2, 1 of each row (end exclusive).
TEST(OnnxSliceNegativeStep, WalksTheAxisBackward) {
  OneNodeModel m = LcSliceRows(5, 0, -1, 5);
  EXPECT_EQ(RunGraph(ConvertOnnx(m.model), {Range(14)}),
            (std::vector<float>{5, 4, 3, 2, 1, 12, 11, 10, 9, 8}))
      << "see docs/onnx.md §3 (Slice): a negative step walks from start down to end";
}

// ONNX clamps a negative step's start to [0, 7-1] and its end to [-1, 7-1]:
// INT64_MAX starts at 6, INT64_MIN ends before element 0. Step -2: 6, 4, 2, 0.
TEST(OnnxSliceNegativeStep, ClampsStartAndEndAtBothEnds) {
  OneNodeModel m = LcSliceRows(kLcMax, kLcMin, -2, 4);
  EXPECT_EQ(RunGraph(ConvertOnnx(m.model), {Range(14)}),
            (std::vector<float>{6, 4, 2, 0, 13, 11, 9, 7}))
      << "see docs/onnx.md §3 (Slice): clamping of a negative step";
}

// Negative indices count from the end first: start -2 is 5, end -6 is 1;
// step -3 takes 5 and 2.
TEST(OnnxSliceNegativeStep, NegativeIndicesCountFromTheEnd) {
  OneNodeModel m = LcSliceRows(-2, -6, -3, 2);
  EXPECT_EQ(RunGraph(ConvertOnnx(m.model), {Range(14)}), (std::vector<float>{5, 2, 12, 9}));
}

// A step of -100 on an axis of 7 takes the start alone.
TEST(OnnxSliceNegativeStep, HugeNegativeStepTakesTheStartAlone) {
  OneNodeModel m = LcSliceRows(4, kLcMin, kLcMin, 1);
  EXPECT_EQ(RunGraph(ConvertOnnx(m.model), {Range(14)}), (std::vector<float>{4, 11}));
}

// X (1,3,4) = 0..11: rows reversed (start 2, end -4 = -1 after adding 3,
// i.e. through row 0) and columns 1..2 forward.
TEST(OnnxSliceNegativeStep, OneAxisBackwardAnotherForward) {
  OneNodeModel m("Slice", 13);
  m.Input("X", {1, 3, 4})
      .Constant(Ints("starts", {2, 1}))
      .Constant(Ints("ends", {-4, 3}))
      .Constant(Ints("axes", {1, 2}))
      .Constant(Ints("steps", {-1, 1}))
      .Output("Y", {1, 3, 2});
  EXPECT_EQ(RunGraph(ConvertOnnx(m.model), {Range(12)}), (std::vector<float>{9, 10, 5, 6, 1, 2}));
}

// start 1, end 5 walking backward selects nothing: ONNX's result is empty,
// which an engine tensor cannot be.
TEST(OnnxSliceNegativeStep, EmptyResultIsRefusedNamingTheNode) {
  OneNodeModel m = LcSliceRows(1, 5, -1, 0);
  ExpectErrorNamingNode(m.model, "the slice of axis 2 is empty");
}

TEST(OnnxSliceNegativeStep, StepZeroIsRefusedNamingTheNode) {
  OneNodeModel m = LcSliceRows(1, 5, 0, 4);
  ExpectErrorNamingNode(m.model, "step 0");
}

// ---- Range and ConstantOfShape, folded ----

// Range(1, 5, 2) of floats = (1, 3); no graph input at all: the graph is a
// constant, run at batch 1.
TEST(OnnxRange, FloatRangeOfConstantsIsAConstantOutput) {
  OneNodeModel m("Range", 11);
  m.Constant(LcScalar("start", onnx::TensorProto::FLOAT, 1))
      .Constant(LcScalar("limit", onnx::TensorProto::FLOAT, 5))
      .Constant(LcScalar("delta", onnx::TensorProto::FLOAT, 2))
      .Output("y", {2});
  LcUndeclaredOutput(m.model);
  const pnnx::Graph graph = ConvertOnnx(m.model);
  EXPECT_EQ(OperatorTypes(graph), (std::vector<std::string>{"pnnx.Attribute", "pnnx.Output"}));
  EXPECT_EQ(RunGraph(graph, {}), (std::vector<float>{1, 3}))
      << "see docs/onnx.md §1: Range is folded at load time";
}

// Range(10, 6, -3) of int32 graph inputs = (10, 7): ceil((6-10)/-3) = 2
// values. The inputs decide the output's shape, so they are bound.
TEST(OnnxRange, IntRangeWithNegativeDeltaFromBoundInputs) {
  OneNodeModel m("Range", 11);
  m.Input("start", {}).Input("limit", {}).Input("delta", {}).Output("y", {2});
  for (const std::string name : {"start", "limit", "delta", "y"}) {
    LcSetType(m.model, name, onnx::TensorProto::INT32);
  }
  LcUndeclaredOutput(m.model);
  OnnxImportOptions options;
  for (const auto& [name, value] :
       {std::pair<std::string, int64_t>{"start", 10}, {"limit", 6}, {"delta", -3}}) {
    NpyArray a;
    a.integer = true;
    a.ints = {value};
    a.data = {static_cast<float>(value)};
    options.input_values[name] = a;
  }
  std::vector<std::string> bound;
  const pnnx::Graph graph = ConvertOnnx(m.model, options, &bound);
  EXPECT_EQ(bound, (std::vector<std::string>{"start", "limit", "delta"}));
  EXPECT_EQ(RunGraph(graph, {}), (std::vector<float>{10, 7}));
}

TEST(OnnxRange, EmptyRangeIsRefusedNamingTheNode) {
  OneNodeModel m("Range", 11);
  m.Constant(LcScalar("start", onnx::TensorProto::INT64, 5))
      .Constant(LcScalar("limit", onnx::TensorProto::INT64, 1))
      .Constant(LcScalar("delta", onnx::TensorProto::INT64, 1))
      .Output("y", {0});
  LcUndeclaredOutput(m.model);
  ExpectErrorNamingNode(m.model, "is empty");
}

TEST(OnnxRange, ZeroDeltaIsRefusedNamingTheNode) {
  OneNodeModel m("Range", 11);
  m.Constant(LcScalar("start", onnx::TensorProto::FLOAT, 0))
      .Constant(LcScalar("limit", onnx::TensorProto::FLOAT, 3))
      .Constant(LcScalar("delta", onnx::TensorProto::FLOAT, 0))
      .Output("y", {3});
  LcUndeclaredOutput(m.model);
  ExpectErrorNamingNode(m.model, "delta is 0");
}

// ConstantOfShape((2,3)) with a float value 1.5: six 1.5s, added to a run-time
// input so that the constant is an operand too.
TEST(OnnxConstantOfShape, FloatValueFillsTheShape) {
  onnx::ModelProto model;
  model.set_ir_version(7);
  model.add_opset_import()->set_version(13);
  auto* graph = model.mutable_graph();
  *graph->add_initializer() = Ints("shape", {2, 3});
  auto* fill = graph->add_node();
  fill->set_op_type("ConstantOfShape");
  fill->set_name("fill");
  fill->add_input("shape");
  fill->add_output("c");
  auto* value = fill->add_attribute();
  value->set_name("value");
  value->set_type(onnx::AttributeProto::TENSOR);
  *value->mutable_t() = FloatTensor("v", {1}, {1.5f});
  auto* add = graph->add_node();
  add->set_op_type("Add");
  add->add_input("x");
  add->add_input("c");
  add->add_output("y");
  *graph->add_input() = ValueInfo("x", {2, 3});
  *graph->add_output() = ValueInfo("y", {2, 3});
  EXPECT_EQ(RunGraph(ConvertOnnx(model), {Range(6)}),
            (std::vector<float>{1.5f, 2.5f, 3.5f, 4.5f, 5.5f, 6.5f}));
}

// ONNX's result holds no values, which an engine tensor cannot: the error
// names the value and where it is read (here: the graph's output).
TEST(OnnxConstantOfShape, ShapeWithAZeroIsRefusedNamingTheValue) {
  OneNodeModel m("ConstantOfShape", 13);
  m.Constant(Ints("shape", {2, 0})).Output("y", {2, 0});
  ExpectConversionErrorContaining(m.model, "constant 'y' of shape (2,0) holds no values");
}

// ---- Shape ----

// Shape(x) as the graph's output: x's values are not read, only its shape;
// x is bound from the value given and the output is the constant (2,3,4).
TEST(OnnxShapeOutput, ShapeOfABoundInputIsAConstantOutput) {
  OneNodeModel m("Shape", 15);
  m.Input("x", {2, 3, 4}).Output("y", {3});
  LcSetType(m.model, "y", onnx::TensorProto::INT64);
  OnnxImportOptions options;
  NpyArray x;
  x.shape = {2, 3, 4};
  x.data = Range(24);
  options.input_values["x"] = x;
  std::vector<std::string> bound;
  const pnnx::Graph graph = ConvertOnnx(m.model, options, &bound);
  EXPECT_EQ(bound, std::vector<std::string>{"x"});
  EXPECT_EQ(RunGraph(graph, {}), (std::vector<float>{2, 3, 4}));
}

TEST(OnnxShapeOutput, WithoutTheInputsValueTheErrorNamesIt) {
  OneNodeModel m("Shape", 15);
  m.Input("x", {2, 3, 4}).Output("y", {3});
  LcSetType(m.model, "y", onnx::TensorProto::INT64);
  ExpectConversionErrorContaining(m.model, "graph input 'x' is read by no operator");
}

// Shape(x) * 2 feeding a run-time Add: x (1,3) + (2*1, 2*3) = x + (2, 6).
TEST(OnnxShapeOutput, ShapeFeedingArithmetic) {
  onnx::ModelProto model;
  model.set_ir_version(7);
  model.add_opset_import()->set_version(13);
  auto* graph = model.mutable_graph();
  *graph->add_input() = ValueInfo("x", {1, 2});
  *graph->add_initializer() = Ints("two", {2});
  AddNode(graph, "Shape", {"x"}, "s");
  AddNode(graph, "Mul", {"s", "two"}, "s2");
  AddNode(graph, "Cast", {"s2"}, "f");
  kuiper::testing::SetInt(graph->mutable_node(2), "to", onnx::TensorProto::FLOAT);
  AddNode(graph, "Add", {"x", "f"}, "y");
  *graph->add_output() = ValueInfo("y", {1, 2});
  EXPECT_EQ(RunGraph(ConvertOnnx(model), {{10, 20}}), (std::vector<float>{12, 24}));
}

// ---- float64 and Constant numbers ----

// Neg of a float64 input: carried as float32, the values (exact in float32) negated.
TEST(OnnxFloat64, DoubleInputAndOutputTravelAsFloat32) {
  OneNodeModel m("Neg", 13);
  m.Input("x", {1, 3}).Output("y", {1, 3});
  LcSetType(m.model, "x", onnx::TensorProto::DOUBLE);
  LcSetType(m.model, "y", onnx::TensorProto::DOUBLE);
  EXPECT_EQ(RunGraph(ConvertOnnx(m.model), {{1.5f, -2.25f, 0.f}}),
            (std::vector<float>{-1.5f, 2.25f, -0.f}));
}

// Constant value_floats (opset 12+) is the 1-D tensor of those numbers.
TEST(OnnxConstantNumbers, ValueFloatsIsAOneDimensionalTensor) {
  onnx::ModelProto model;
  model.set_ir_version(7);
  model.add_opset_import()->set_version(13);
  auto* graph = model.mutable_graph();
  auto* constant = graph->add_node();
  constant->set_op_type("Constant");
  constant->add_output("c");
  auto* attr = constant->add_attribute();
  attr->set_name("value_floats");
  attr->set_type(onnx::AttributeProto::FLOATS);
  for (float f : {0.5f, -1.f, 4.f}) attr->add_floats(f);
  auto* add = graph->add_node();
  add->set_op_type("Add");
  add->add_input("x");
  add->add_input("c");
  add->add_output("y");
  *graph->add_input() = ValueInfo("x", {2, 3});
  *graph->add_output() = ValueInfo("y", {2, 3});
  EXPECT_EQ(RunGraph(ConvertOnnx(model), {Range(6)}),
            (std::vector<float>{0.5f, 0.f, 6.f, 3.5f, 3.f, 9.f}));
}

// ---- Resize, cubic mode ----

// Resize of (1,1,1,4) = (1,2,4,8) by 2 along W, asymmetric: x_in = x_out / 2.
// The cubic kernel with a = -0.75 weighs the taps floor(x)-1 .. floor(x)+2 at
// x = 0.5 by k(1.5), k(0.5), k(0.5), k(1.5) = -0.09375, 0.59375, 0.59375,
// -0.09375; tap -1 reads the edge pixel 1 (or, excluded, weighs 0 and the
// other three are divided by their sum 1.09375).
OneNodeModel LcCubicResize(bool exclude_outside) {
  OneNodeModel m("Resize", 13);
  m.Input("X", {1, 1, 1, 4});
  m.node->add_input("");  // no roi
  m.Constant(FloatTensor("scales", {4}, {1, 1, 1, 2})).Output("Y", {1, 1, 1, 8});
  auto* mode = m.node->add_attribute();
  mode->set_name("mode");
  mode->set_type(onnx::AttributeProto::STRING);
  mode->set_s("cubic");
  auto* coordinates = m.node->add_attribute();
  coordinates->set_name("coordinate_transformation_mode");
  coordinates->set_type(onnx::AttributeProto::STRING);
  coordinates->set_s("asymmetric");
  if (exclude_outside) kuiper::testing::SetInt(m.node, "exclude_outside", 1);
  return m;
}

TEST(OnnxResizeCubic, FourTapsWithTheEdgePixelOutside) {
  const std::vector<float> y = RunGraph(ConvertOnnx(LcCubicResize(false).model), {{1, 2, 4, 8}});
  ASSERT_EQ(y.size(), 8u);
  EXPECT_NEAR(y[0], 1.f, 1e-6f) << "x = 0: the pixel itself";
  EXPECT_NEAR(y[1], -0.09375f * 1 + 0.59375f * 1 + 0.59375f * 2 - 0.09375f * 4, 1e-6f)
      << "x = 0.5 (1.3125); see docs/onnx.md §5";
  EXPECT_NEAR(y[2], 2.f, 1e-6f);
  EXPECT_NEAR(y[3], -0.09375f * 1 + 0.59375f * 2 + 0.59375f * 4 - 0.09375f * 8, 1e-6f)
      << "x = 1.5 (2.71875)";
}

TEST(OnnxResizeCubic, ExcludeOutsideRenormalisesTheInsideTaps) {
  const std::vector<float> y = RunGraph(ConvertOnnx(LcCubicResize(true).model), {{1, 2, 4, 8}});
  ASSERT_EQ(y.size(), 8u);
  EXPECT_NEAR(y[1], (0.59375f * 1 + 0.59375f * 2 - 0.09375f * 4) / 1.09375f, 1e-6f)
      << "x = 0.5 with tap -1 excluded (9/7)";
  EXPECT_NEAR(y[3], 2.71875f, 1e-6f) << "x = 1.5: every tap inside";
}

TEST(OnnxResizeCubic, NonFiniteCoefficientIsRefusedNamingTheNode) {
  OneNodeModel m = LcCubicResize(false);
  auto* a = m.node->add_attribute();
  a->set_name("cubic_coeff_a");
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(std::numeric_limits<float>::infinity());
  ExpectErrorNamingNode(m.model, "cubic_coeff_a must be finite");
}

// ---- Gather with indices computed at run time ----

// data (3,4) = 0..11, indices (2,2) = ((2,0),(-1,1)) a run-time input, axis 0:
// output (2,2,4) = rows 2, 0, 2 (-1 from the end), 1.
TEST(OnnxGatherRunTimeIndices, IndicesFedAtRunTimeSelectRows) {
  OneNodeModel m("Gather", 13);
  m.Input("data", {3, 4}).Input("indices", {2, 2}).Output("y", {2, 2, 4});
  LcSetType(m.model, "indices", onnx::TensorProto::INT64);
  const std::vector<float> y = RunGraph(ConvertOnnx(m.model), {Range(12), {2, 0, -1, 1}});
  EXPECT_EQ(y, (std::vector<float>{8, 9, 10, 11, 0, 1, 2, 3, 8, 9, 10, 11, 4, 5, 6, 7}))
      << "see docs/onnx.md §3 (Gather)";
}

// axis 1: columns 3 and 1 of each row.
TEST(OnnxGatherRunTimeIndices, AlongTheLastAxis) {
  OneNodeModel m("Gather", 13);
  m.Input("data", {3, 4}).Input("indices", {2}).Output("y", {3, 2});
  kuiper::testing::SetInt(m.node, "axis", 1);
  LcSetType(m.model, "indices", onnx::TensorProto::INT64);
  EXPECT_EQ(RunGraph(ConvertOnnx(m.model), {Range(12), {3, 1}}),
            (std::vector<float>{3, 1, 7, 5, 11, 9}));
}

// An index out of range is known only at run time: Forward stops naming the operator.
TEST(OnnxGatherRunTimeIndices, IndexOutOfRangeStopsForwardNamingTheOperator) {
  OneNodeModel m("Gather", 13);
  m.Input("data", {3, 4}).Input("indices", {2}).Output("y", {2, 4});
  LcSetType(m.model, "indices", onnx::TensorProto::INT64);
  try {
    RunGraph(ConvertOnnx(m.model), {Range(12), {0, 3}});
    FAIL() << "no error";
  } catch (const LayerError& e) {
    EXPECT_NE(std::string(e.what()).find("the_node"), std::string::npos) << e.what();
  }
}

// GatherElements, data (2,3) = 0..5 and indices (2,2) = ((2,0),(-1,1)) fed
// at run time, axis 1: y[i][j] = data[i][indices[i][j]] = ((2,0),(5,4)).
TEST(OnnxGatherRunTimeIndices, GatherElementsPicksPerRow) {
  OneNodeModel m("GatherElements", 13);
  m.Input("data", {2, 3}).Input("indices", {2, 2}).Output("y", {2, 2});
  kuiper::testing::SetInt(m.node, "axis", 1);
  LcSetType(m.model, "indices", onnx::TensorProto::INT64);
  EXPECT_EQ(RunGraph(ConvertOnnx(m.model), {Range(6), {2, 0, -1, 1}}),
            (std::vector<float>{2, 0, 5, 4}));
}

TEST(OnnxGatherRunTimeIndices, GatherElementsOfAnotherRankNamesTheNode) {
  OneNodeModel m("GatherElements", 13);
  m.Input("data", {2, 3}).Input("indices", {4}).Output("y", {4});
  LcSetType(m.model, "indices", onnx::TensorProto::INT64);
  ExpectErrorNamingNode(m.model, "differ in rank");
}

// ---- BatchNormalization, training mode ----

// x (2,1,1,2) = (1,2,3,6): the batch mean is 3 and the biased variance
// (4+1+0+9)/4 = 3.5; with epsilon 0.5 the divisor is sqrt(4) = 2, so with
// scale 2 and B 1, y = (x-3)/2*2+1 = (-1,0,1,4). Momentum 0.5 blends the
// running mean 1 to 0.5*1+0.5*3 = 2 and the running variance 1.5 to 2.5.
TEST(OnnxBatchNormTraining, NormalisesWithTheBatchStatisticsAndBlendsTheRunningOnes) {
  OneNodeModel m("BatchNormalization", 15);
  m.Input("x", {2, 1, 1, 2})
      .Constant(FloatTensor("scale", {1}, {2}))
      .Constant(FloatTensor("B", {1}, {1}))
      .Constant(FloatTensor("mean", {1}, {1}))
      .Constant(FloatTensor("var", {1}, {1.5f}))
      .Output("y", {2, 1, 1, 2})
      .Output("running_mean", {1})
      .Output("running_var", {1});
  kuiper::testing::SetInt(m.node, "training_mode", 1);
  for (const auto& [name, value] :
       {std::pair<std::string, float>{"epsilon", 0.5f}, {"momentum", 0.5f}}) {
    auto* attr = m.node->add_attribute();
    attr->set_name(name);
    attr->set_type(onnx::AttributeProto::FLOAT);
    attr->set_f(value);
  }
  RuntimeGraph runtime(ConvertOnnx(m.model), "test");
  runtime.Build();
  const std::vector<std::vector<sftensor>> outputs =
      runtime.Forward(std::vector<std::vector<sftensor>>{
          ValuesToBatch({1, 2, 3, 6}, runtime.input_operators()[0]->output_operand->shapes)});
  ASSERT_EQ(outputs.size(), 3u);
  EXPECT_EQ(BatchToValues(outputs[0]), (std::vector<float>{-1, 0, 1, 4}))
      << "see docs/onnx.md §3 (BatchNormalization)";
  EXPECT_EQ(BatchToValues(outputs[1]), std::vector<float>{2});
  EXPECT_EQ(BatchToValues(outputs[2]), std::vector<float>{2.5f});
}

TEST(OnnxBatchNormTraining, ScaleOfAnotherSizeIsRefusedNamingTheNode) {
  OneNodeModel m("BatchNormalization", 15);
  m.Input("x", {2, 3, 1, 2})
      .Constant(FloatTensor("scale", {2}, {1, 1}))
      .Constant(FloatTensor("B", {3}, {0, 0, 0}))
      .Constant(FloatTensor("mean", {3}, {0, 0, 0}))
      .Constant(FloatTensor("var", {3}, {1, 1, 1}))
      .Output("y", {2, 3, 1, 2});
  kuiper::testing::SetInt(m.node, "training_mode", 1);
  ExpectErrorNamingNode(m.model, "input 1 has 2 values, expected C=3");
}

}  // namespace
}  // namespace kuiper::testing
