// ExpressionParser: tokens, tree, reverse Polish and errors, for the functions
// of two arguments. One-argument functions (sin, neg, ...) are parsed by lab
// course7_expression and tested there and in kuiper/test/layers.
#include <gtest/gtest.h>

#include <string>

#include "kuiper/error.hpp"
#include "kuiper/expression.hpp"

namespace kuiper {
namespace {

std::vector<std::string> TokenTexts(ExpressionParser& parser) {
  std::vector<std::string> texts;
  for (const Token& token : parser.Tokenize()) texts.emplace_back(parser.TokenText(token));
  return texts;
}

// The tree written back as text, numbers as %g.
std::string Show(const TokenNode& node) {
  if (node.type == TokenType::kInput) return "@" + std::to_string(node.input_index);
  if (node.type == TokenType::kNumber) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%g", node.value);
    return buffer;
  }
  std::string text = std::string(TokenTypeName(node.type)) + "(" + Show(*node.left);
  if (node.right) text += "," + Show(*node.right);
  return text + ")";
}

std::string Rpn(ExpressionParser& parser) {
  std::string text;
  for (const TokenNode* node : parser.ReversePolish()) {
    if (!text.empty()) text += " ";
    text += FunctionArity(node->type) > 0 ? std::string(TokenTypeName(node->type)) : Show(*node);
  }
  return text;
}

// The position the ParseError for `statement` reports, or -1 if none is thrown.
int ErrorPosition(const std::string& statement, int input_count = -1) {
  try {
    ExpressionParser parser(statement, input_count);
    parser.Generate();
  } catch (const ParseError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(statement), std::string::npos) << message;
    const size_t at = message.find("position ");
    if (at == std::string::npos) return -2;
    return std::stoi(message.substr(at + 9));
  }
  return -1;
}

TEST(ExpressionTokens, SplitsCallsOperandsAndPunctuation) {
  ExpressionParser parser("add(mul(@0,@1),@12)");
  EXPECT_EQ(TokenTexts(parser), std::vector<std::string>({"add", "(", "mul", "(", "@0", ",", "@1",
                                                          ")", ",", "@12", ")"}));
  const std::vector<Token>& tokens = parser.tokens();
  EXPECT_EQ(tokens[0].type, TokenType::kAdd);
  EXPECT_EQ(tokens[2].type, TokenType::kMul);
  EXPECT_EQ(tokens[9].type, TokenType::kInput);
  EXPECT_EQ(tokens[9].start_pos, 15);
  EXPECT_EQ(tokens[9].end_pos, 18);
}

TEST(ExpressionTokens, ReadsNumbersInEveryForm) {
  ExpressionParser parser("pow(2.000000e+00,-1.5e-3) 4 .5 -7 1E2");
  EXPECT_EQ(TokenTexts(parser), std::vector<std::string>({"pow", "(", "2.000000e+00", ",",
                                                          "-1.5e-3", ")", "4", ".5", "-7", "1E2"}));
  for (size_t i : {2, 4, 6, 7, 8, 9}) EXPECT_EQ(parser.tokens()[i].type, TokenType::kNumber);
}

TEST(ExpressionTokens, KnowsEveryCoreFunction) {
  ExpressionParser parser("add sub mul div pow neg exp log sqrt rsqrt abs");
  const std::vector<TokenType> expected = {TokenType::kAdd,   TokenType::kSub, TokenType::kMul,
                                           TokenType::kDiv,   TokenType::kPow, TokenType::kNeg,
                                           TokenType::kExp,   TokenType::kLog, TokenType::kSqrt,
                                           TokenType::kRsqrt, TokenType::kAbs};
  ASSERT_EQ(parser.Tokenize().size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(parser.tokens()[i].type, expected[i]);
}

TEST(ExpressionTokens, SkipsSpaces) {
  ExpressionParser parser(" add( @0 ,\t@1 ) ");
  EXPECT_EQ(TokenTexts(parser), std::vector<std::string>({"add", "(", "@0", ",", "@1", ")"}));
}

TEST(ExpressionTree, NestsCallsAsWritten) {
  ExpressionParser parser("add(mul(@0,@1),@2)");
  EXPECT_EQ(Show(parser.Generate()), "add(mul(@0,@1),@2)");
  const TokenNode& root = parser.Generate();
  EXPECT_EQ(root.left->type, TokenType::kMul);
  EXPECT_EQ(root.right->input_index, 2);
}

TEST(ExpressionTree, ReadsNumberValues) {
  ExpressionParser parser("sub(mul(@0,4),-2.5e-01)");
  const TokenNode& root = parser.Generate();
  EXPECT_EQ(root.left->right->value, 4.f);
  EXPECT_EQ(root.right->value, -0.25f);
}

TEST(ExpressionTree, SingleOperandIsALeaf) {
  ExpressionParser parser("@3");
  EXPECT_EQ(Show(parser.Generate()), "@3");
}

TEST(ExpressionReversePolish, PutsArgumentsBeforeTheirFunction) {
  ExpressionParser parser("add(mul(@0,@1),@2)");
  EXPECT_EQ(Rpn(parser), "@0 @1 mul @2 add");
  ExpressionParser deeper("add(add(mul(@0,@1),mul(@2,add(add(add(@0,@2),@3),@4))),@5)");
  EXPECT_EQ(Rpn(deeper), "@0 @1 mul @2 @0 @2 add @3 add @4 add mul add @5 add");
  ExpressionParser numbers("div(sub(@0,2),3)");
  EXPECT_EQ(Rpn(numbers), "@0 2 sub 3 div");
}

TEST(ExpressionErrors, EmptyStatement) {
  EXPECT_EQ(ErrorPosition(""), 0);
  EXPECT_EQ(ErrorPosition("   "), 3);
}

TEST(ExpressionErrors, UnexpectedCharacter) { EXPECT_EQ(ErrorPosition("add(@0,#1)"), 7); }

TEST(ExpressionErrors, AtSignWithoutDigits) {
  EXPECT_EQ(ErrorPosition("add(@,@1)"), 4);
  EXPECT_EQ(ErrorPosition("add(@0,@x)"), 7);
}

TEST(ExpressionErrors, MalformedNumbers) {
  EXPECT_EQ(ErrorPosition("add(@0,1e)"), 8);
  EXPECT_EQ(ErrorPosition("add(@0,1e+)"), 8);
  EXPECT_EQ(ErrorPosition("add(@0,-.)"), 7);
  EXPECT_EQ(ErrorPosition("add(@0,1e99)"), 7);  // does not fit a float
}

TEST(ExpressionErrors, MissingBrackets) {
  EXPECT_EQ(ErrorPosition("add@0,@1)"), 3);
  EXPECT_EQ(ErrorPosition("add(@0,@1"), 9);
  EXPECT_EQ(ErrorPosition("add(mul(@0,@1),@2"), 17);  // the end
}

TEST(ExpressionErrors, MissingComma) {
  EXPECT_EQ(ErrorPosition("add(@0 @1)"), 7);
  EXPECT_EQ(ErrorPosition("add(@0)"), 6);
}

TEST(ExpressionErrors, MisplacedTokens) {
  EXPECT_EQ(ErrorPosition("add(,@1)"), 4);
  EXPECT_EQ(ErrorPosition(")"), 0);
  EXPECT_EQ(ErrorPosition("add"), 3);
  EXPECT_EQ(ErrorPosition("add(@0,@1,@2)"), 9);
}

TEST(ExpressionErrors, TrailingTokens) {
  EXPECT_EQ(ErrorPosition("add(@0,@1))"), 10);
  EXPECT_EQ(ErrorPosition("@0 @1"), 3);
  EXPECT_EQ(ErrorPosition("add(@0,@1),"), 10);
}

TEST(ExpressionErrors, OperandOutOfRange) {
  EXPECT_EQ(ErrorPosition("add(@0,@2)", 2), 7);
  EXPECT_EQ(ErrorPosition("add(@0,@1)", 2), -1);
  EXPECT_EQ(ErrorPosition("add(@0,@99999999999)"), 7);  // does not fit an int
}

}  // namespace
}  // namespace kuiper
