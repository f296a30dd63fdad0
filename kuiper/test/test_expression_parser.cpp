// ExpressionParser: tokens, leaves and the errors found before any call is
// parsed. Calls (the grammar's call rule, ParseCall) and their reverse Polish
// are lab course7_expression's, and tested there.
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

std::string ParseMessageOf(const std::string& statement) {
  try {
    ExpressionParser(statement, 1).Generate();
  } catch (const ParseError& e) {
    return e.what();
  }
  return "";
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

TEST(ExpressionTree, SingleOperandIsALeaf) {
  ExpressionParser parser("@3");
  const TokenNode& root = parser.Generate();
  EXPECT_EQ(root.type, TokenType::kInput);
  EXPECT_EQ(root.input_index, 3);
  EXPECT_TRUE(root.arguments.empty());
  EXPECT_EQ(parser.ReversePolish(), std::vector<const TokenNode*>{&root});
}

TEST(ExpressionTree, SingleNumberIsALeaf) {
  ExpressionParser parser("-2.5e-01");
  EXPECT_EQ(parser.Generate().type, TokenType::kNumber);
  EXPECT_EQ(parser.Generate().value, -0.25f);
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
  EXPECT_EQ(ErrorPosition("1e99"), 0);  // does not fit a float
}

// Calls are parsed by lab course7_expression (ParseCall) and tested there;
// these errors come before any call is read.
TEST(ExpressionErrors, MisplacedTokens) {
  EXPECT_EQ(ErrorPosition(")"), 0);
  EXPECT_EQ(ErrorPosition(","), 0);
}

TEST(ExpressionErrors, TrailingTokens) {
  EXPECT_EQ(ErrorPosition("@0 @1"), 3);
  EXPECT_EQ(ErrorPosition("@0)"), 2);
}

TEST(ExpressionErrors, OperandOutOfRange) {
  EXPECT_EQ(ErrorPosition("@2", 2), 0);
  EXPECT_EQ(ErrorPosition("@1", 2), -1);
  EXPECT_EQ(ErrorPosition("@99999999999"), 0);  // does not fit an int
}

// ((((@0)))): brackets around an expression are not part of the grammar.
TEST(ExpressionErrors, BracketsAHundredThousandDeepAreAParseErrorAtTheFirst) {
  const std::string message =
      ParseMessageOf(std::string(100000, '(') + "@0" + std::string(100000, ')'));
  ASSERT_FALSE(message.empty()) << "no ParseError";
  EXPECT_NE(message.find(": position 0: expected an operand, a number or a function, got '('"),
            std::string::npos)
      << message.substr(message.size() - 200);
}

}  // namespace
}  // namespace kuiper
