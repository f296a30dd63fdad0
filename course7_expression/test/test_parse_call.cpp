// course7_expression: the grammar's call rule for any arity,
//   call := name '(' expression (',' expression)* ')'
// (ExpressionParser::ParseCall). References: trees and reverse Polish written
// out by hand from the statements, and each function's arity as the README's
// word table gives it (typed in here, not read from FunctionArity).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kuiper/error.hpp"
#include "kuiper/expression.hpp"

namespace kuiper {
namespace {

const char* kCallRule = "see README \"2. Tree: recursive descent\"";

// The tree written back as text, numbers as %g: name(arg,arg,...).
std::string CallShow(const TokenNode& node) {
  if (node.type == TokenType::kInput) return "@" + std::to_string(node.input_index);
  if (node.type == TokenType::kNumber) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%g", node.value);
    return buffer;
  }
  std::string text = std::string(TokenTypeName(node.type)) + "(";
  for (size_t i = 0; i < node.arguments.size(); ++i) {
    text += (i ? "," : "") + CallShow(*node.arguments[i]);
  }
  text += ")";
  return text;
}

std::string CallRpn(ExpressionParser& parser) {
  std::string text;
  for (const TokenNode* node : parser.ReversePolish()) {
    if (!text.empty()) text += " ";
    text += node->type == TokenType::kInput || node->type == TokenType::kNumber
                ? CallShow(*node)
                : std::string(TokenTypeName(node->type));
  }
  return text;
}

// The ParseError's message for `statement`, or "" if none is thrown.
std::string CallError(const std::string& statement, int input_count = -1) {
  try {
    ExpressionParser(statement, input_count).Generate();
  } catch (const ParseError& e) {
    return e.what();
  }
  return "";
}

// The position the ParseError for `statement` reports: -1 if none is thrown.
int CallErrorPosition(const std::string& statement, int input_count = -1) {
  const std::string message = CallError(statement, input_count);
  if (message.empty()) return -1;
  EXPECT_NE(message.find(statement), std::string::npos) << message;
  const size_t at = message.find("position ");
  return at == std::string::npos ? -2 : std::stoi(message.substr(at + 9));
}

TEST(CallTree, NestsCallsAsWritten) {
  ExpressionParser parser("add(mul(@0,@1),@2)");
  const TokenNode& root = parser.Generate();
  EXPECT_EQ(CallShow(root), "add(mul(@0,@1),@2)") << kCallRule;
  ASSERT_EQ(root.arguments.size(), 2u);
  EXPECT_EQ(root.arguments[0]->type, TokenType::kMul);
  EXPECT_EQ(root.arguments[1]->input_index, 2);
}

TEST(CallTree, ArgumentsKeepTheOrderWritten) {
  ExpressionParser parser("sub(@1,div(@0,pow(@2,3)))");
  EXPECT_EQ(CallShow(parser.Generate()), "sub(@1,div(@0,pow(@2,3)))") << kCallRule;
}

TEST(CallTree, ReadsNumberValues) {
  ExpressionParser parser("sub(mul(@0,4),-2.5e-01)");
  const TokenNode& root = parser.Generate();
  ASSERT_EQ(root.arguments.size(), 2u);
  EXPECT_EQ(root.arguments[0]->arguments.at(1)->value, 4.f);
  EXPECT_EQ(root.arguments[1]->value, -0.25f);
}

TEST(CallTree, WhereIsACallOfThreeArguments) {
  ExpressionParser parser("where(gt(@0,0),@0,mul(@0,0.5))", 1);
  const TokenNode& root = parser.Generate();
  EXPECT_EQ(root.type, TokenType::kWhere);
  ASSERT_EQ(root.arguments.size(), 3u) << kCallRule;
  EXPECT_EQ(root.arguments[0]->type, TokenType::kGt);
  EXPECT_EQ(root.arguments[1]->type, TokenType::kInput);
  EXPECT_EQ(root.arguments[2]->type, TokenType::kMul);
  EXPECT_EQ(CallRpn(parser), "@0 0 gt @0 @0 0.5 mul where");
}

// Every word the core and the lab know, with its arity from the README's
// table: the one rule parses a call of each with that many arguments.
TEST(CallTree, EveryFunctionParsesWithItsArity) {
  const std::vector<std::pair<std::string, int>> words = {
      {"add", 2},   {"sub", 2},  {"mul", 2},  {"div", 2},   {"pow", 2},       {"max", 2},
      {"min", 2},   {"fmod", 2}, {"eq", 2},   {"ne", 2},    {"remainder", 2}, {"lt", 2},
      {"gt", 2},    {"le", 2},   {"ge", 2},   {"and", 2},   {"or", 2},        {"xor", 2},
      {"neg", 1},   {"exp", 1},  {"log", 1},  {"sqrt", 1},  {"rsqrt", 1},     {"abs", 1},
      {"sin", 1},   {"cos", 1},  {"tanh", 1}, {"floor", 1}, {"ceil", 1},      {"round", 1},
      {"trunc", 1}, {"sign", 1}, {"erf", 1},  {"tan", 1},   {"sinh", 1},      {"cosh", 1},
      {"asin", 1},  {"acos", 1}, {"atan", 1}, {"asinh", 1}, {"acosh", 1},     {"atanh", 1},
      {"not", 1},   {"where", 3}};
  ASSERT_EQ(words.size(), 44u);
  for (const auto& [word, arity] : words) {
    std::string call = word + "(";
    std::string rpn;
    for (int i = 0; i < arity; ++i) {
      call += (i ? ",@" : "@") + std::to_string(arity - i);  // @3,@2,@1: order visible
      rpn += "@" + std::to_string(arity - i) + " ";
    }
    call += ")";
    ExpressionParser parser(call);
    EXPECT_EQ(CallShow(parser.Generate()), call) << kCallRule;
    EXPECT_EQ(CallRpn(parser), rpn + word);
  }
}

TEST(CallReversePolish, PutsArgumentsBeforeTheirFunction) {
  ExpressionParser parser("add(mul(@0,@1),@2)");
  EXPECT_EQ(CallRpn(parser), "@0 @1 mul @2 add");
  ExpressionParser deeper("add(add(mul(@0,@1),mul(@2,add(add(add(@0,@2),@3),@4))),@5)");
  EXPECT_EQ(CallRpn(deeper), "@0 @1 mul @2 @0 @2 add @3 add @4 add mul add @5 add");
  ExpressionParser numbers("div(sub(@0,2),3)");
  EXPECT_EQ(CallRpn(numbers), "@0 2 sub 3 div");
}

TEST(CallReversePolish, YoloHeadFormula) {
  ExpressionParser parser("mul(add(sub(mul(@0,2),0.5),@1),8.0)", 2);
  EXPECT_EQ(CallRpn(parser), "@0 2 mul 0.5 sub @1 add 8 mul");
}

TEST(CallErrors, MissingBrackets) {
  EXPECT_EQ(CallErrorPosition("add@0,@1)"), 3);
  EXPECT_EQ(CallErrorPosition("add(@0,@1"), 9);
  EXPECT_EQ(CallErrorPosition("add(mul(@0,@1),@2"), 17);  // the end
  EXPECT_EQ(CallErrorPosition("add"), 3);
}

TEST(CallErrors, MissingCommaStopsTheCallAtTheNextToken) {
  EXPECT_EQ(CallErrorPosition("add(@0 @1)"), 7);
  EXPECT_EQ(CallErrorPosition("where(@0,@1 @2)"), 12);
}

TEST(CallErrors, TrailingCommaIsAnErrorAtTheBracket) {
  EXPECT_EQ(CallErrorPosition("add(@0,@1,)"), 10);
  EXPECT_EQ(CallErrorPosition("neg(@0,)"), 7);
  EXPECT_NE(CallError("add(@0,@1,)").find("got ')'"), std::string::npos)
      << CallError("add(@0,@1,)");
}

TEST(CallErrors, MisplacedTokens) {
  EXPECT_EQ(CallErrorPosition("add(,@1)"), 4);
  EXPECT_EQ(CallErrorPosition("neg()"), 4);
  EXPECT_EQ(CallErrorPosition("neg((@0))"), 4);
}

TEST(CallErrors, TrailingTokens) {
  EXPECT_EQ(CallErrorPosition("add(@0,@1))"), 10);
  EXPECT_EQ(CallErrorPosition("add(@0,@1),"), 10);
  EXPECT_EQ(CallErrorPosition("neg(@0)@1"), 7);
}

TEST(CallErrors, OperandOutOfRangeInsideACall) {
  EXPECT_EQ(CallErrorPosition("add(@0,@2)", 2), 7);
  EXPECT_EQ(CallErrorPosition("add(@0,@1)", 2), -1);
  EXPECT_EQ(CallErrorPosition("add(@0,1e99)"), 7);  // does not fit a float
}

// The arity check: the message names the function, the count it takes and
// the count given; the position is that of the function's name.
TEST(CallArity, TooManyArgumentsNameTheFunctionAndBothCounts) {
  const std::string message = CallError("neg(@0,@1)");
  EXPECT_NE(message.find("position 0: 'neg' takes 1 argument(s), got 2"), std::string::npos)
      << message << "\n"
      << kCallRule;
  const std::string where = CallError("where(@0,@1,@2,@0)");
  EXPECT_NE(where.find("position 0: 'where' takes 3 argument(s), got 4"), std::string::npos)
      << where;
}

TEST(CallArity, TooFewArgumentsNameTheFunctionAndBothCounts) {
  const std::string message = CallError("add(@0)");
  EXPECT_NE(message.find("position 0: 'add' takes 2 argument(s), got 1"), std::string::npos)
      << message << "\n"
      << kCallRule;
  const std::string where = CallError("where(@0,@1)");
  EXPECT_NE(where.find("position 0: 'where' takes 3 argument(s), got 2"), std::string::npos)
      << where;
}

TEST(CallArity, AWrongCallInsideARightOneIsReported) {
  const std::string message = CallError("add(@0,mul(@1,@2,@0))");
  EXPECT_NE(message.find("'mul' takes 2 argument(s), got 3"), std::string::npos) << message;
}

}  // namespace
}  // namespace kuiper
