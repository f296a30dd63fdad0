// course7_expression stretch task: infix formulas with precedence, rewritten
// into calls. Optional; not part of the lab's grade (label course7_stretch).
// Expected call forms are derived by hand from the precedence rules; values
// are computed with plain C++ arithmetic.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <string_view>

#include "kuiper/error.hpp"
#include "kuiper/layers/expression.hpp"

namespace kuiper {

// course7_expression/src/stretch_infix.cpp
std::string InfixToCalls(std::string_view infix);

namespace {

const char* kWhy = "see README \"Stretch: infix with precedence\"";

int ErrorPosition(std::string_view infix) {
  try {
    InfixToCalls(infix);
  } catch (const ParseError& e) {
    const std::string message = e.what();
    const size_t at = message.find("position ");
    return at == std::string::npos ? -2 : std::stoi(message.substr(at + 9));
  }
  return -1;
}

TEST(Infix, MultiplicationBindsTighterThanAddition) {
  EXPECT_EQ(InfixToCalls("@0*@1+@2"), "add(mul(@0,@1),@2)") << kWhy;
  EXPECT_EQ(InfixToCalls("@0+@1*@2"), "add(@0,mul(@1,@2))") << kWhy;
  EXPECT_EQ(InfixToCalls("@0-@1/@2"), "sub(@0,div(@1,@2))") << kWhy;
}

TEST(Infix, OperatorsOfOneLevelAssociateToTheLeft) {
  EXPECT_EQ(InfixToCalls("@0-@1-@2"), "sub(sub(@0,@1),@2)") << kWhy;
  EXPECT_EQ(InfixToCalls("@0/@1*@2"), "mul(div(@0,@1),@2)") << kWhy;
  EXPECT_EQ(InfixToCalls("@0+@1-@2+@3"), "add(sub(add(@0,@1),@2),@3)") << kWhy;
}

TEST(Infix, BracketsOverridePrecedence) {
  EXPECT_EQ(InfixToCalls("(@0+@1)*@2"), "mul(add(@0,@1),@2)");
  EXPECT_EQ(InfixToCalls("@0-(@1-@2)"), "sub(@0,sub(@1,@2))");
  EXPECT_EQ(InfixToCalls("((@0))"), "@0");
}

TEST(Infix, CallsAndNumbersAreKept) {
  EXPECT_EQ(InfixToCalls("sin(@0)*2+0.5"), "add(mul(sin(@0),2),0.5)");
  EXPECT_EQ(InfixToCalls("pow(@0+1,2)"), "pow(add(@0,1),2)");
  EXPECT_EQ(InfixToCalls("cos(@0*@1)"), "cos(mul(@0,@1))");
}

TEST(Infix, SpacesAreIgnored) { EXPECT_EQ(InfixToCalls(" @0 * @1 + @2 "), "add(mul(@0,@1),@2)"); }

TEST(Infix, MalformedFormulasReportThePosition) {
  EXPECT_EQ(ErrorPosition("@0+"), 3) << kWhy;     // nothing after '+'
  EXPECT_EQ(ErrorPosition("(@0+@1"), 6) << kWhy;  // not closed
  EXPECT_EQ(ErrorPosition("@0*)"), 3) << kWhy;    // ')' where an operand belongs
  EXPECT_EQ(ErrorPosition("@0 @1"), 3) << kWhy;   // two operands in a row
  EXPECT_EQ(ErrorPosition("@+@1"), 0) << kWhy;    // '@' without digits
  EXPECT_EQ(ErrorPosition("sin @0"), 4) << kWhy;  // a name without '('
  EXPECT_EQ(ErrorPosition(""), 0) << kWhy;
}

TEST(Infix, TheResultRunsThroughTheExpressionLayer) {
  ExpressionLayer layer(InfixToCalls("@0*@1+sin(@2)/2"), 3);
  sftensor a = TensorCreate({2}), b = TensorCreate({2}), c = TensorCreate({2});
  a->Fill({1.f, -2.f});
  b->Fill({3.f, 0.5f});
  c->Fill({0.f, 1.f});
  std::vector<sftensor> outputs(1);
  ASSERT_EQ(layer.Forward({a, b, c}, outputs), InferStatus::kInferSuccess);
  EXPECT_NEAR(outputs[0]->index(0), 1.f * 3.f + std::sin(0.f) / 2.f, 1e-6f);
  EXPECT_NEAR(outputs[0]->index(1), -2.f * 0.5f + std::sin(1.f) / 2.f, 1e-6f);
}

}  // namespace
}  // namespace kuiper
