// Element-wise ONNX nodes (onnx/src/lower_elementwise.cpp): each becomes one
// pnnx.Expression, run here on a small model and compared with the ONNX
// operator definition computed in this file (a loop in double, or by hand).
// Integer and bool values travel as float32; the integer semantics (Div
// truncates, Mod takes the divisor's sign, Cast truncates and wraps) are
// checked through Cast nodes that make the integers inside the graph.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "onnx_test_util.hpp"

namespace kuiper::testing {
namespace {

constexpr float kElemNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kElemInf = std::numeric_limits<float>::infinity();

const std::vector<int64_t> kElemShape = {2, 3, 4};
// -3 to about 3.7, with 0 and values on both sides of every threshold below.
std::vector<float> ElemValues() { return Iota(24, -3.f, 0.35f); }

onnx::ValueInfoProto ElemTyped(const std::string& name, const std::vector<int64_t>& shape,
                               int elem) {
  onnx::ValueInfoProto info = ValueInfo(name, shape);
  info.mutable_type()->mutable_tensor_type()->set_elem_type(elem);
  return info;
}

void ElemSetFloat(onnx::NodeProto* node, const std::string& name, float value) {
  auto* attr = node->add_attribute();
  attr->set_name(name);
  attr->set_type(onnx::AttributeProto::FLOAT);
  attr->set_f(value);
}

void ElemSetString(onnx::NodeProto* node, const std::string& name, const std::string& value) {
  auto* attr = node->add_attribute();
  attr->set_name(name);
  attr->set_type(onnx::AttributeProto::STRING);
  attr->set_s(value);
}

void ElemSetInt(onnx::NodeProto* node, const std::string& name, int64_t value) {
  auto* attr = node->add_attribute();
  attr->set_name(name);
  attr->set_type(onnx::AttributeProto::INT);
  attr->set_i(value);
}

// A model built node by node: float inputs, any nodes, typed outputs.
struct ElemModel {
  onnx::ModelProto model;
  explicit ElemModel(int opset = 13) {
    model.set_ir_version(8);
    model.add_opset_import()->set_version(opset);
  }
  ElemModel& Input(const std::string& name, const std::vector<int64_t>& shape) {
    *model.mutable_graph()->add_input() = ValueInfo(name, shape);
    return *this;
  }
  ElemModel& Constant(const onnx::TensorProto& tensor) {
    *model.mutable_graph()->add_initializer() = tensor;
    return *this;
  }
  onnx::NodeProto* Node(const std::string& type, const std::vector<std::string>& inputs,
                        const std::vector<std::string>& outputs, const std::string& name = "") {
    onnx::NodeProto* node = model.mutable_graph()->add_node();
    node->set_op_type(type);
    node->set_name(name.empty() ? type + "_" + outputs.at(0) : name);
    for (const std::string& in : inputs) node->add_input(in);
    for (const std::string& out : outputs) node->add_output(out);
    return node;
  }
  ElemModel& Output(const std::string& name, const std::vector<int64_t>& shape,
                    int elem = onnx::TensorProto::FLOAT) {
    *model.mutable_graph()->add_output() = ElemTyped(name, shape, elem);
    return *this;
  }
  std::vector<float> Run(const std::vector<std::vector<float>>& inputs) const {
    return RunGraph(ConvertOnnx(model), inputs);
  }
};

// NaN must come out as NaN; everything else exactly or within `tolerance`.
void ElemExpectNear(const std::vector<float>& got, const std::vector<float>& want, float tolerance,
                    const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << what << " element " << i << ": got " << got[i];
    } else if (std::isinf(want[i])) {
      EXPECT_EQ(got[i], want[i]) << what << " element " << i;
    } else {
      EXPECT_NEAR(got[i], want[i], tolerance * std::max(1.f, std::abs(want[i])))
          << what << " element " << i << " (x = " << ElemValues()[i % ElemValues().size()] << ")";
    }
  }
}

// One node of one float input X (2,3,4) and output Y, run on ElemValues().
std::vector<float> ElemRunUnary(const std::string& type,
                                const std::function<void(onnx::NodeProto*)>& set = nullptr,
                                int out_elem = onnx::TensorProto::FLOAT,
                                const std::vector<float>& x = ElemValues()) {
  ElemModel g;
  g.Input("X", kElemShape);
  onnx::NodeProto* node = g.Node(type, {"X"}, {"Y"}, "the_node");
  if (set) set(node);
  g.Output("Y", kElemShape, out_elem);
  return g.Run({x});
}

std::vector<float> ElemReference(const std::function<double(double)>& f,
                                 const std::vector<float>& x = ElemValues()) {
  std::vector<float> y;
  for (float v : x) y.push_back(static_cast<float>(f(v)));
  return y;
}

// ---- functions of one input ----

TEST(OnnxElementwise, MathFunctionsFollowTheirDefinitions) {
  const std::vector<std::pair<std::string, std::function<double(double)>>> cases = {
      {"Tanh", [](double x) { return std::tanh(x); }},
      {"Floor", [](double x) { return std::floor(x); }},
      {"Ceil", [](double x) { return std::ceil(x); }},
      {"Sign", [](double x) { return x > 0   ? 1.0
                                     : x < 0 ? -1.0
                                             : 0.0; }},
      {"Erf", [](double x) { return std::erf(x); }},
      {"Cos", [](double x) { return std::cos(x); }},
      {"Tan", [](double x) { return std::tan(x); }},
      {"Sinh", [](double x) { return std::sinh(x); }},
      {"Cosh", [](double x) { return std::cosh(x); }},
      {"Atan", [](double x) { return std::atan(x); }},
      {"Asinh", [](double x) { return std::asinh(x); }},
      {"Reciprocal", [](double x) { return 1.0 / x; }},
      {"Softplus", [](double x) { return std::log(1.0 + std::exp(x)); }},
      {"Softsign", [](double x) { return x / (1.0 + std::abs(x)); }},
      {"Mish", [](double x) { return x * std::tanh(std::log(1.0 + std::exp(x))); }},
  };
  for (const auto& [type, f] : cases) {
    ElemExpectNear(ElemRunUnary(type), ElemReference(f), 1e-6f,
                   type + ": see the ONNX operator's definition");
  }
}

TEST(OnnxElementwise, InverseTrigonometryInsideItsDomain) {
  std::vector<float> unit, above_one;
  for (int i = 0; i < 24; ++i) unit.push_back(-0.95f + 0.08f * static_cast<float>(i));
  for (int i = 0; i < 24; ++i) above_one.push_back(1.f + 0.3f * static_cast<float>(i));
  ElemExpectNear(ElemRunUnary("Asin", nullptr, onnx::TensorProto::FLOAT, unit),
                 ElemReference([](double x) { return std::asin(x); }, unit), 1e-6f, "Asin");
  ElemExpectNear(ElemRunUnary("Acos", nullptr, onnx::TensorProto::FLOAT, unit),
                 ElemReference([](double x) { return std::acos(x); }, unit), 1e-6f, "Acos");
  ElemExpectNear(ElemRunUnary("Atanh", nullptr, onnx::TensorProto::FLOAT, unit),
                 ElemReference([](double x) { return std::atanh(x); }, unit), 1e-6f, "Atanh");
  ElemExpectNear(ElemRunUnary("Acosh", nullptr, onnx::TensorProto::FLOAT, above_one),
                 ElemReference([](double x) { return std::acosh(x); }, above_one), 1e-6f, "Acosh");
}

TEST(OnnxElementwise, RoundGoesHalfToEven) {
  std::vector<float> x = {0.5f, 1.5f, 2.5f,  -0.5f, -1.5f, -2.5f,
                          2.4f, 2.6f, -2.6f, 0.f,   7.5f,  8.5f};
  x.resize(24, 0.25f);
  std::vector<float> want = {0, 2, 2, -0.f, -2, -2, 2, 3, -3, 0, 8, 8};
  want.resize(24, 0.f);
  ElemExpectNear(ElemRunUnary("Round", nullptr, onnx::TensorProto::FLOAT, x), want, 0.f,
                 "ONNX Round: halves to the even neighbour");
}

TEST(OnnxElementwise, IsNaNAndIsInfGiveBools) {
  std::vector<float> x = {1.f, kElemNaN, kElemInf, -kElemInf, 0.f, -3.f};
  x.resize(24, 2.f);
  const auto at = [](std::vector<float> head) {
    head.resize(24, 0.f);
    return head;
  };
  ElemExpectNear(ElemRunUnary("IsNaN", nullptr, onnx::TensorProto::BOOL, x), at({0, 1, 0, 0, 0, 0}),
                 0.f, "IsNaN");
  ElemExpectNear(ElemRunUnary("IsInf", nullptr, onnx::TensorProto::BOOL, x), at({0, 0, 1, 1, 0, 0}),
                 0.f, "IsInf");
  const auto only = [](const char* keep, const char* drop) {
    return [=](onnx::NodeProto* node) {
      ElemSetInt(node, keep, 1);
      ElemSetInt(node, drop, 0);
    };
  };
  ElemExpectNear(
      ElemRunUnary("IsInf", only("detect_positive", "detect_negative"), onnx::TensorProto::BOOL, x),
      at({0, 0, 1, 0, 0, 0}), 0.f, "IsInf detect_positive only");
  ElemExpectNear(
      ElemRunUnary("IsInf", only("detect_negative", "detect_positive"), onnx::TensorProto::BOOL, x),
      at({0, 0, 0, 1, 0, 0}), 0.f, "IsInf detect_negative only");
}

// ---- activations with parameters ----

TEST(OnnxElementwise, ActivationsWithParametersFollowTheirDefinitions) {
  struct Case {
    std::string type;
    std::vector<std::pair<std::string, float>> attrs;
    std::function<double(double)> f;
  };
  const double selu_alpha = 1.67326319217681884765625, selu_gamma = 1.05070102214813232421875;
  const std::vector<Case> cases = {
      {"LeakyRelu", {}, [](double x) { return x < 0 ? 0.01 * x : x; }},
      {"LeakyRelu", {{"alpha", 0.3f}}, [](double x) { return x < 0 ? 0.3f * x : x; }},
      {"Elu", {}, [](double x) { return x > 0 ? x : std::exp(x) - 1; }},
      {"Elu", {{"alpha", 2.f}}, [](double x) { return x > 0 ? x : 2 * (std::exp(x) - 1); }},
      {"Celu",
       {{"alpha", 2.f}},
       [](double x) { return std::max(0.0, x) + std::min(0.0, 2 * (std::exp(x / 2) - 1)); }},
      {"Selu",
       {},
       [=](double x) { return selu_gamma * (x > 0 ? x : selu_alpha * (std::exp(x) - 1)); }},
      {"Selu",
       {{"alpha", 2.f}, {"gamma", 3.f}},
       [](double x) { return 3 * (x > 0 ? x : 2 * (std::exp(x) - 1)); }},
      {"ThresholdedRelu", {}, [](double x) { return x > 1 ? x : 0; }},
      {"ThresholdedRelu", {{"alpha", 0.5f}}, [](double x) { return x > 0.5f ? x : 0; }},
      {"Shrink", {}, [](double x) { return x < -0.5  ? x
                                           : x > 0.5 ? x
                                                     : 0; }},
      {"Shrink",
       {{"bias", 1.5f}, {"lambd", 1.f}},
       [](double x) { return x < -1  ? x + 1.5
                             : x > 1 ? x - 1.5
                                     : 0; }},
  };
  for (const Case& c : cases) {
    const auto set = [&](onnx::NodeProto* node) {
      for (const auto& [name, value] : c.attrs) ElemSetFloat(node, name, value);
    };
    ElemExpectNear(ElemRunUnary(c.type, set), ElemReference(c.f), 1e-6f,
                   c.type + " with " + std::to_string(c.attrs.size()) + " attribute(s)");
  }
}

TEST(OnnxElementwise, ActivationsKeepInfinities) {
  std::vector<float> x = {-kElemInf, kElemInf, -1.f, 2.f};
  x.resize(24, 0.5f);
  const std::vector<float> leaky = ElemRunUnary("LeakyRelu", nullptr, onnx::TensorProto::FLOAT, x);
  EXPECT_EQ(leaky[0], -kElemInf);
  EXPECT_EQ(leaky[1], kElemInf);
  const std::vector<float> thresholded =
      ElemRunUnary("ThresholdedRelu", nullptr, onnx::TensorProto::FLOAT, x);
  EXPECT_EQ(thresholded[0], 0.f) << "-inf is below the threshold: 0, not -inf * 0 = NaN";
  EXPECT_EQ(thresholded[1], kElemInf);
}

TEST(OnnxElementwise, PReluBroadcastsItsSlopeOverTheLastAxis) {
  ElemModel g;
  g.Input("X", kElemShape).Constant(FloatTensor("slope", {4}, {0.f, 0.5f, -1.f, 2.f}));
  g.Node("PRelu", {"X", "slope"}, {"Y"});
  g.Output("Y", kElemShape);
  const std::vector<float> x = ElemValues(), slope = {0.f, 0.5f, -1.f, 2.f};
  std::vector<float> want;
  for (size_t i = 0; i < x.size(); ++i) want.push_back(x[i] < 0 ? slope[i % 4] * x[i] : x[i]);
  ElemExpectNear(g.Run({x}), want, 0.f, "PRelu: slope * x where x < 0");
}

// ---- comparisons, logic, Where ----

TEST(OnnxElementwise, ComparisonsBroadcastAndGiveBools) {
  const std::vector<float> y = {-1.f, 0.3f, 0.f, 2.f};
  const std::vector<std::pair<std::string, std::function<bool(float, float)>>> cases = {
      {"Equal", [](float a, float b) { return a == b; }},
      {"Less", [](float a, float b) { return a < b; }},
      {"Greater", [](float a, float b) { return a > b; }},
      {"LessOrEqual", [](float a, float b) { return a <= b; }},
      {"GreaterOrEqual", [](float a, float b) { return a >= b; }},
  };
  std::vector<float> x = ElemValues();
  x[2] = 0.f;  // equal to y[2]
  x[7] = 2.f;  // equal to y[3]
  for (const auto& [type, f] : cases) {
    ElemModel g(type == "LessOrEqual" || type == "GreaterOrEqual" ? 16 : 13);
    g.Input("X", kElemShape).Input("Y", {4});
    g.Node(type, {"X", "Y"}, {"Z"});
    g.Output("Z", kElemShape, onnx::TensorProto::BOOL);
    std::vector<float> want;
    for (size_t i = 0; i < x.size(); ++i) want.push_back(f(x[i], y[i % 4]) ? 1.f : 0.f);
    ElemExpectNear(g.Run({x, y}), want, 0.f, type + " with Y (4) broadcast over X (2,3,4)");
  }
}

// Bools come from comparisons inside the graph: (X > 0) op (X < 1), Not(X > 0).
TEST(OnnxElementwise, LogicOnBoolsFromComparisons) {
  const std::vector<std::pair<std::string, std::function<bool(bool, bool)>>> cases = {
      {"And", [](bool a, bool b) { return a && b; }},
      {"Or", [](bool a, bool b) { return a || b; }},
      {"Xor", [](bool a, bool b) { return a != b; }},
  };
  const std::vector<float> x = ElemValues();
  for (const auto& [type, f] : cases) {
    ElemModel g;
    g.Input("X", kElemShape)
        .Constant(FloatTensor("zero", {}, {0.f}))
        .Constant(FloatTensor("one", {}, {1.f}));
    g.Node("Greater", {"X", "zero"}, {"positive"});
    g.Node("Less", {"X", "one"}, {"below_one"});
    g.Node(type, {"positive", "below_one"}, {"Z"});
    g.Output("Z", kElemShape, onnx::TensorProto::BOOL);
    std::vector<float> want;
    for (float v : x) want.push_back(f(v > 0, v < 1) ? 1.f : 0.f);
    ElemExpectNear(g.Run({x}), want, 0.f, type);
  }
  ElemModel g;
  g.Input("X", kElemShape).Constant(FloatTensor("zero", {}, {0.f}));
  g.Node("Greater", {"X", "zero"}, {"positive"});
  g.Node("Not", {"positive"}, {"Z"});
  g.Output("Z", kElemShape, onnx::TensorProto::BOOL);
  std::vector<float> want;
  for (float v : x) want.push_back(v > 0 ? 0.f : 1.f);
  ElemExpectNear(g.Run({x}), want, 0.f, "Not");
}

TEST(OnnxElementwise, WhereBroadcastsConditionAndBothBranches) {
  ElemModel g;
  g.Input("X", kElemShape).Input("B", {3, 1}).Constant(FloatTensor("zero", {}, {0.f}));
  g.Node("Greater", {"X", "zero"}, {"cond"});
  g.Node("Where", {"cond", "X", "B"}, {"Y"});
  g.Output("Y", kElemShape);
  const std::vector<float> x = ElemValues(), b = {-10.f, -20.f, -30.f};
  std::vector<float> want;
  for (size_t i = 0; i < x.size(); ++i) want.push_back(x[i] > 0 ? x[i] : b[(i / 4) % 3]);
  ElemExpectNear(g.Run({x, b}), want, 0.f, "Where(X > 0, X, B (3,1))");
}

TEST(OnnxElementwise, WhereWithTwoInputsIsRefusedNamingTheNode) {
  ElemModel g;
  g.Input("X", kElemShape).Input("A", kElemShape);
  g.Node("Where", {"X", "A"}, {"Y"}, "the_node");
  g.Output("Y", kElemShape);
  ExpectErrorNamingNode(g.model, "needs 3 input(s), has 2");
}

// ---- variadic ----

TEST(OnnxElementwise, VariadicSumMeanMaxMinBroadcastEveryInput) {
  const std::vector<float> a = ElemValues(), b = {1.f, -2.f, 0.5f, kElemNaN},
                           c = {0.25f, 3.f, -1.f};
  for (const std::string type : {"Sum", "Mean", "Max", "Min"}) {
    ElemModel g;
    g.Input("A", kElemShape).Input("B", {4}).Input("C", {3, 1});
    g.Node(type, {"A", "B", "C"}, {"Y"});
    g.Output("Y", kElemShape);
    std::vector<float> want;
    for (size_t i = 0; i < a.size(); ++i) {
      const double x = a[i], y = b[i % 4], z = c[(i / 4) % 3];
      double r = 0;
      if (type == "Sum") r = x + y + z;
      if (type == "Mean") r = (x + y + z) / 3;
      if (type == "Max") r = std::isnan(y) ? y : std::max({x, y, z});
      if (type == "Min") r = std::isnan(y) ? y : std::min({x, y, z});
      want.push_back(static_cast<float>(r));
    }
    ElemExpectNear(g.Run({a, b, c}), want, 1e-6f, type + " (NaN propagates as in NumPy)");
  }
}

TEST(OnnxElementwise, VariadicOfOneInputIsACopy) {
  for (const std::string type : {"Sum", "Mean", "Max", "Min"}) {
    ElemExpectNear(ElemRunUnary(type), ElemValues(), 0.f, type);
  }
}

// ---- integer semantics, Mod, Cast ----

// Cast(A, INT32) and Cast(B, INT32), then `type` of the two: the integer
// values come from float inputs as a real model would make them.
std::vector<float> ElemRunIntegerBinary(const std::string& type, const std::vector<float>& a,
                                        const std::vector<float>& b,
                                        const std::function<void(onnx::NodeProto*)>& set) {
  const std::vector<int64_t> shape = {static_cast<int64_t>(a.size())};
  ElemModel g;
  g.Input("A", shape).Input("B", shape);
  ElemSetInt(g.Node("Cast", {"A"}, {"a"}), "to", onnx::TensorProto::INT32);
  ElemSetInt(g.Node("Cast", {"B"}, {"b"}), "to", onnx::TensorProto::INT32);
  onnx::NodeProto* node = g.Node(type, {"a", "b"}, {"Y"}, "the_node");
  if (set) set(node);
  g.Output("Y", shape, onnx::TensorProto::INT32);
  return g.Run({a, b});
}

TEST(OnnxElementwise, ModOfIntegersTakesTheDivisorsSign) {
  const std::vector<float> a = {7.f, -7.f, 7.f, -7.f, 6.f, 5.9f};
  const std::vector<float> b = {3, 3, -3, -3, 4, 4};
  // Python's %: 7 % 3 = 1, -7 % 3 = 2, 7 % -3 = -2, -7 % -3 = -1, 6 % 4 = 2, 5 % 4 = 1
  try {
    ElemExpectNear(ElemRunIntegerBinary("Mod", a, b, nullptr), {1, 2, -2, -1, 2, 1}, 0.f,
                   "ONNX Mod fmod=0");
    ElemExpectNear(ElemRunIntegerBinary("Mod", a, b, [](auto* n) { ElemSetInt(n, "fmod", 1); }),
                   {1, -1, 1, -1, 2, 1}, 0.f, "ONNX Mod fmod=1 (C's fmod)");
  } catch (const ConversionError& e) {
    FAIL() << e.what();
  }
}

TEST(OnnxElementwise, DivOfIntegersTruncatesTowardZero) {
  const std::vector<float> a = {7.f, -7.f, 7.f, -7.f, 9.9f, 1.f};
  const std::vector<float> b = {2, 2, -2, -2, 4, 3};
  ElemExpectNear(ElemRunIntegerBinary("Div", a, b, nullptr), {3, -3, -3, 3, 2, 0}, 0.f,
                 "integer Div as in C (9.9 casts to 9 first)");
}

TEST(OnnxElementwise, ModOfFloatsNeedsFmodOne) {
  ElemModel g;
  g.Input("X", kElemShape).Input("D", kElemShape);
  g.Node("Mod", {"X", "D"}, {"Y"}, "the_node");
  g.Output("Y", kElemShape);
  ExpectErrorNamingNode(g.model, "fmod=0 is defined for integer inputs only");
}

TEST(OnnxElementwise, ModOfFloatsWithFmodOneIsCsFmod) {
  ElemModel g;
  g.Input("X", {4}).Input("D", {4});
  ElemSetInt(g.Node("Mod", {"X", "D"}, {"Y"}), "fmod", 1);
  g.Output("Y", {4});
  ElemExpectNear(g.Run({{5.5f, -5.5f, 5.5f, -4.f}, {2.f, 2.f, -2.f, 2.f}}),
                 {1.5f, -1.5f, 1.5f, -0.f}, 0.f, "fmod");
}

std::vector<float> ElemRunCast(int to, const std::vector<float>& x) {
  ElemModel g;
  g.Input("X", {static_cast<int64_t>(x.size())});
  ElemSetInt(g.Node("Cast", {"X"}, {"Y"}, "the_node"), "to", to);
  g.Output("Y", {static_cast<int64_t>(x.size())}, to);
  return g.Run({x});
}

TEST(OnnxElementwise, CastFollowsTheTargetType) {
  const std::vector<float> x = {2.7f, -2.7f, 0.f, 300.f, -1.f, 129.5f};
  ElemExpectNear(ElemRunCast(onnx::TensorProto::INT32, x), {2, -2, 0, 300, -1, 129}, 0.f,
                 "to INT32: toward zero");
  ElemExpectNear(ElemRunCast(onnx::TensorProto::BOOL, x), {1, 1, 0, 1, 1, 1}, 0.f,
                 "to BOOL: x != 0");
  ElemExpectNear(ElemRunCast(onnx::TensorProto::UINT8, x), {2, 254, 0, 44, 255, 129}, 0.f,
                 "to UINT8: truncated, then modulo 256");
  ElemExpectNear(ElemRunCast(onnx::TensorProto::INT8, x), {2, -2, 0, 44, -1, -127}, 0.f,
                 "to INT8: truncated, then the low 8 bits as two's complement");
  ElemExpectNear(ElemRunCast(onnx::TensorProto::DOUBLE, x), x, 0.f, "to DOUBLE: the same values");
}

TEST(OnnxElementwise, CastToStringIsRefusedNamingTheNode) {
  ElemModel g;
  g.Input("X", {3});
  ElemSetInt(g.Node("Cast", {"X"}, {"Y"}, "the_node"), "to", onnx::TensorProto::STRING);
  g.Output("Y", {3}, onnx::TensorProto::STRING);
  ExpectErrorNamingNode(g.model, "Cast to ONNX type STRING is not supported");
}

TEST(OnnxElementwise, BitShiftOfFloatsIsRefusedNamingTheNode) {
  ElemModel g;
  g.Input("X", {3}).Input("S", {3});
  ElemSetString(g.Node("BitShift", {"X", "S"}, {"Y"}, "the_node"), "direction", "LEFT");
  g.Output("Y", {3});
  ExpectErrorNamingNode(g.model, "needs unsigned integer inputs");
}

TEST(OnnxElementwise, NaNAttributeIsRefusedNamingTheNode) {
  ElemModel g;
  g.Input("X", kElemShape);
  ElemSetFloat(g.Node("Elu", {"X"}, {"Y"}, "the_node"), "alpha", kElemNaN);
  g.Output("Y", kElemShape);
  ExpectErrorNamingNode(g.model, "attribute 'alpha' is NaN");
}

// ---- Dropout ----

TEST(OnnxElementwise, DropoutAtInferenceIsTheIdentityWithAnAllTrueMask) {
  ElemModel g(13);
  g.Input("X", kElemShape);
  g.Node("Dropout", {"X"}, {"Y", "mask"});
  g.Output("Y", kElemShape).Output("mask", kElemShape, onnx::TensorProto::BOOL);
  RuntimeGraph runtime(ConvertOnnx(g.model), "test");
  runtime.Build();
  const std::vector<float> x = ElemValues();
  const std::vector<std::vector<sftensor>> inputs = {
      ValuesToBatch(x, runtime.input_operators()[0]->output_operand->shapes)};
  const auto outputs = runtime.Forward(inputs);
  ASSERT_EQ(outputs.size(), 2u);
  ElemExpectNear(BatchToValues(outputs[0]), x, 0.f, "Dropout output");
  ElemExpectNear(BatchToValues(outputs[1]), std::vector<float>(24, 1.f), 0.f, "Dropout mask");
}

TEST(OnnxElementwise, DropoutInsideTheGraphAddsNoOperator) {
  ElemModel g(13);
  g.Input("X", kElemShape);
  g.Node("Dropout", {"X"}, {"D"});
  g.Node("Tanh", {"D"}, {"Y"});
  g.Output("Y", kElemShape);
  EXPECT_EQ(OperatorTypes(ConvertOnnx(g.model)),
            (std::vector<std::string>{"pnnx.Input", "pnnx.Expression", "pnnx.Output"}));
}

// The ratio as a graph input is read by no one at inference; the engine
// refuses a graph input no operator reads, so the copy takes it as an operand.
TEST(OnnxElementwise, DropoutWithARatioGivenAtRunTimeIsTheIdentity) {
  ElemModel g(13);
  g.Input("X", kElemShape).Input("ratio", {});
  // A scalar: a shape of no dims (not an absent shape).
  g.model.mutable_graph()->mutable_input(1)->mutable_type()->mutable_tensor_type()->mutable_shape();
  g.Node("Dropout", {"X", "ratio"}, {"D"});
  g.Node("Tanh", {"D"}, {"Y"});
  g.Output("Y", kElemShape);
  ElemExpectNear(g.Run({ElemValues(), {0.5f}}),
                 ElemReference([](double x) { return std::tanh(x); }), 1e-6f, "Tanh(Dropout(X))");
}

TEST(OnnxElementwise, TrainingDropoutWithARatioIsRefusedNamingTheNode) {
  ElemModel g(13);
  onnx::TensorProto mode;
  mode.set_name("training");
  mode.set_data_type(onnx::TensorProto::BOOL);
  mode.add_int32_data(1);
  g.Input("X", kElemShape).Constant(FloatTensor("ratio", {}, {0.5f})).Constant(mode);
  g.Node("Dropout", {"X", "ratio", "training"}, {"Y"}, "the_node");
  g.Output("Y", kElemShape);
  ExpectErrorNamingNode(g.model, "training_mode=true with ratio 0.5");
}

}  // namespace
}  // namespace kuiper::testing
