// pnnx.Expression with functions of one argument, parsed by lab
// course7_expression (ParseCall), and words no lexer knows.
#include <gtest/gtest.h>

#include <cmath>

#include "../op_test.hpp"
#include "kuiper/error.hpp"
#include "kuiper/layers/expression.hpp"

namespace kuiper {
namespace {

// Through the op-test harness (op_test.hpp): every mode, values in [0.25, 9).
TEST(ExpressionUnary, EveryFunctionMatchesItsFormula) {
  const std::vector<std::pair<std::string, float (*)(float)>> cases = {
      {"neg(@0)", [](float v) { return -v; }},
      {"exp(@0)", [](float v) { return std::exp(v); }},
      {"log(@0)", [](float v) { return std::log(v); }},
      {"sqrt(@0)", [](float v) { return std::sqrt(v); }},
      {"rsqrt(@0)", [](float v) { return 1.f / std::sqrt(v); }},
      {"abs(neg(@0))", [](float v) { return v; }},
      {"sin(@0)", [](float v) { return std::sin(v); }},
  };
  for (const auto& [expr, formula] : cases) {
    SCOPED_TRACE(expr);
    test::TestElementwise("pnnx.Expression", {{"expr", expr}}, {4}, formula, 1e-6f, 0.25f, 9.f);
  }
}

TEST(ExpressionUnary, MixesWithBinaryCallsAndNumbers) {
  ExpressionLayer layer("div(exp(neg(@0)),add(@1,-1.0e+00))", 2);
  sftensor a = TensorCreate({2}), b = TensorCreate({2});
  a->Fill({0.f, 1.f});
  b->Fill({3.f, 5.f});
  std::vector<sftensor> outputs(1);
  ASSERT_EQ(layer.Forward({a, b}, outputs), InferStatus::kInferSuccess);
  EXPECT_NEAR(outputs[0]->index(0), 1.f / 2.f, 1e-6f);
  EXPECT_NEAR(outputs[0]->index(1), std::exp(-1.f) / 4.f, 1e-6f);
}

int ErrorPosition(const std::string& statement) {
  try {
    ExpressionParser parser(statement);
    parser.Generate();
  } catch (const ParseError& e) {
    const std::string message = e.what();
    const size_t at = message.find("position ");
    return at == std::string::npos ? -2 : std::stoi(message.substr(at + 9));
  }
  return -1;
}

TEST(ExpressionUnary, UnknownWordIsAParseError) {
  EXPECT_EQ(ErrorPosition("add(@0,cot(@1))"), 7);
  EXPECT_EQ(ErrorPosition("ad(@0,@1)"), 0);
}

TEST(ExpressionUnary, WrongArgumentCountIsAParseError) {
  EXPECT_EQ(ErrorPosition("sqrt(@0,@1)"), 0);  // a wrong count is reported at the name
  EXPECT_EQ(ErrorPosition("exp()"), 4);
  EXPECT_EQ(ErrorPosition("neg@0"), 3);
}

}  // namespace
}  // namespace kuiper
