// Deeply nested expressions: the parser recurses once per level, so nesting
// beyond ExpressionParser::kMaxDepth must end in a ParseError, never in a
// stack overflow, while nesting within it still parses and evaluates. The
// parser goes one level deeper in the lab's call rule (ParseCall): every
// argument is parsed at depth + 1.
#include <gtest/gtest.h>

#include <string>

#include "kuiper/error.hpp"
#include "kuiper/expression.hpp"

namespace kuiper {
namespace {

// add(add(add(@0,@0),@0),@0) with `depth` adds: the nesting is in the first
// argument, so the parser is `depth` calls deep before it reads any operand.
std::string LeftNestedAdds(int depth) {
  std::string text;
  for (int i = 0; i < depth; ++i) text += "add(";
  text += "@0,@0)";
  for (int i = 1; i < depth; ++i) text += ",@0)";
  return text;
}

// add(@0,add(@0,add(@0,@0))) with `depth` adds: the nesting is in the second
// argument, so the parser reads an operand at every level on the way down.
std::string RightNestedAdds(int depth) {
  std::string text;
  for (int i = 0; i < depth; ++i) text += "add(@0,";
  text += "@0";
  return text + std::string(depth, ')');
}

std::string ParseErrorOf(const std::string& statement) {
  try {
    ExpressionParser(statement, 1).Generate();
  } catch (const ParseError& e) {
    return e.what();
  }
  return "";
}

TEST(ExpressionNesting, LeftNestedAddsAHundredThousandDeepAreAParseError) {
  const std::string message = ParseErrorOf(LeftNestedAdds(100000));
  ASSERT_FALSE(message.empty()) << "no ParseError";
  EXPECT_NE(message.find("nests deeper than 256 levels"), std::string::npos)
      << message.substr(message.size() - 200);
  // The first word too deep: the add( at level kMaxDepth + 1, 4 characters each.
  EXPECT_NE(message.find(": position 1024: "), std::string::npos)
      << message.substr(message.size() - 200);
}

TEST(ExpressionNesting, RightNestedAddsAHundredThousandDeepAreAParseError) {
  const std::string message = ParseErrorOf(RightNestedAdds(100000));
  ASSERT_FALSE(message.empty()) << "no ParseError";
  // The first word too deep: the @0 inside the kMaxDepth-th add(, after
  // kMaxDepth - 1 "add(@0," of 7 characters each and "add(".
  EXPECT_NE(message.find(": position 1789: the expression nests deeper than 256 levels"),
            std::string::npos)
      << message.substr(message.size() - 200);
}

// kMaxDepth - 1 adds nest kMaxDepth levels deep, the deepest operands included.
TEST(ExpressionNesting, RightNestedAddsJustWithinTheLimitParse) {
  EXPECT_TRUE(ParseErrorOf(RightNestedAdds(ExpressionParser::kMaxDepth - 1)).empty());
}

// kMaxDepth adds: the deepest add is at level kMaxDepth and its operands at
// kMaxDepth + 1, one level too deep.
TEST(ExpressionNesting, TheLimitCountsOperandsAsALevel) {
  EXPECT_TRUE(ParseErrorOf(LeftNestedAdds(ExpressionParser::kMaxDepth - 1)).empty());
  EXPECT_FALSE(ParseErrorOf(LeftNestedAdds(ExpressionParser::kMaxDepth)).empty());
}

// The deepest expression allowed: kMaxDepth - 1 adds of x, plus x, is kMaxDepth
// times x (exact in float for these small integers).
TEST(ExpressionNesting, DeepestAllowedExpressionEvaluates) {
  const int adds = ExpressionParser::kMaxDepth - 1;
  ExpressionParser parser(LeftNestedAdds(adds), 1);
  const std::vector<const TokenNode*> rpn = parser.ReversePolish();
  EXPECT_EQ(rpn.size(), static_cast<size_t>(2 * adds + 1));

  sftensor x = TensorCreate({2, 3});
  for (uint32_t i = 0; i < x->size(); ++i) x->index(i) = static_cast<float>(i) - 2.5f;
  const std::vector<sftensor> result = EvaluateReversePolish(rpn, {{x, x}}, 2);
  ASSERT_EQ(result.size(), 2u);
  for (const sftensor& item : result) {
    ASSERT_EQ(item->raw_shapes(), x->raw_shapes());
    for (uint32_t i = 0; i < x->size(); ++i) {
      EXPECT_EQ(item->index(i), ExpressionParser::kMaxDepth * x->index(i)) << "element " << i;
    }
  }
}

}  // namespace
}  // namespace kuiper
