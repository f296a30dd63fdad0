// course7_expression: sin and cos in the lexer (ClassifyWord), the parser
// (ParseCall) and the evaluator (TensorElementTrig). References: std::sin,
// std::cos, hand-derived trees and PyTorch's output for models/fixtures/tiny_sin
// (torch.sin(x) + x * sigmoid(x)).
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

#include "kuiper/error.hpp"
#include "kuiper/expression.hpp"
#include "kuiper/layers/expression.hpp"
#include "kuiper/npy.hpp"

namespace kuiper {
namespace {

const std::string kFixtures = std::string(KUIPER_SOURCE_DIR) + "/models/fixtures/";
const std::string kExample = "add(mul(@0,@1),sin(@2))";

std::string SinRpnText(ExpressionParser& parser) {
  std::string text;
  for (const TokenNode* node : parser.ReversePolish()) {
    if (!text.empty()) text += " ";
    text += node->type == TokenType::kInput ? "@" + std::to_string(node->input_index)
                                            : std::string(TokenTypeName(node->type));
  }
  return text;
}

int SinErrorPosition(const std::string& statement) {
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

const char* kTokens = "see README \"1. Tokens\"";
const char* kTree = "see README \"2. Tree: recursive descent\"";

TEST(SinLexer, ClassifyWordKnowsSinAndCos) {
  EXPECT_EQ(ClassifyWord("sin"), TokenType::kSin) << kTokens;
  EXPECT_EQ(ClassifyWord("cos"), TokenType::kCos) << kTokens;
}

TEST(SinLexer, ClassifyWordRejectsOtherWords) {
  for (const char* word : {"cot", "sinc", "cosec", "si", "co", "SIN", "Cos", "sin2", "sincos"}) {
    EXPECT_EQ(ClassifyWord(word), TokenType::kUnknown)
        << word << ": only exact names are functions; " << kTokens;
  }
}

TEST(SinLexer, TokenizesTheExample) {
  ExpressionParser parser(kExample);
  const std::vector<Token>& tokens = parser.Tokenize();
  const std::vector<TokenType> expected = {
      TokenType::kAdd,          TokenType::kLeftBracket,  TokenType::kMul,
      TokenType::kLeftBracket,  TokenType::kInput,        TokenType::kComma,
      TokenType::kInput,        TokenType::kRightBracket, TokenType::kComma,
      TokenType::kSin,          TokenType::kLeftBracket,  TokenType::kInput,
      TokenType::kRightBracket, TokenType::kRightBracket};
  ASSERT_EQ(tokens.size(), expected.size());
  for (size_t i = 0; i < tokens.size(); ++i) EXPECT_EQ(tokens[i].type, expected[i]) << i;
  EXPECT_EQ(parser.TokenText(tokens[9]), "sin");
  EXPECT_EQ(tokens[9].start_pos, 15);
}

TEST(SinLexer, UnknownWordReportsItsPosition) { EXPECT_EQ(SinErrorPosition("add(@0,cot(@1))"), 7); }

TEST(SinParser, SinIsANodeWithOneArgument) {
  ExpressionParser parser(kExample);
  const TokenNode& root = parser.Generate();
  ASSERT_EQ(root.type, TokenType::kAdd);
  ASSERT_EQ(root.arguments.size(), 2u);
  const TokenNode& sin = *root.arguments[1];
  EXPECT_EQ(sin.type, TokenType::kSin);
  ASSERT_EQ(sin.arguments.size(), 1u) << kTree;
  EXPECT_EQ(sin.arguments[0]->type, TokenType::kInput);
  EXPECT_EQ(sin.arguments[0]->input_index, 2);
}

TEST(SinParser, EveryOneArgumentFunctionIsParsedByTheSameRule) {
  // ParseCall parses every function, not only the lab's.
  for (const char* name : {"neg", "exp", "log", "sqrt", "rsqrt", "abs", "sin", "cos"}) {
    ExpressionParser parser(std::string(name) + "(@1)");
    const TokenNode& root = parser.Generate();
    EXPECT_EQ(TokenTypeName(root.type), name)
        << "the node's type is the called function; " << kTree;
    ASSERT_EQ(root.arguments.size(), 1u) << name;
    EXPECT_EQ(root.arguments[0]->input_index, 1) << name;
  }
}

TEST(SinParser, ACallInsideACallLeavesTheIndexAfterItsBracket) {
  // After cos(@0) the index must stand on ',' so that add can read its second
  // argument, and after sin(...) on the final ')'.
  ExpressionParser parser("sin(add(cos(@0),neg(@1)))");
  const TokenNode& root = parser.Generate();
  ASSERT_EQ(root.type, TokenType::kSin);
  ASSERT_EQ(root.arguments.size(), 1u);
  const TokenNode& add = *root.arguments[0];
  ASSERT_EQ(add.type, TokenType::kAdd);
  ASSERT_EQ(add.arguments.size(), 2u);
  EXPECT_EQ(add.arguments[0]->type, TokenType::kCos) << kTree;
  EXPECT_EQ(add.arguments[1]->type, TokenType::kNeg) << kTree;
  EXPECT_EQ(SinRpnText(parser), "@0 cos @1 neg add sin") << "see README \"3. Reverse Polish\"";
}

TEST(SinParser, NestedSinCalls) {
  ExpressionParser parser("sin(sin(mul(@0,2)))");
  const TokenNode& root = parser.Generate();
  EXPECT_EQ(root.type, TokenType::kSin);
  ASSERT_EQ(root.arguments.size(), 1u);
  EXPECT_EQ(root.arguments[0]->type, TokenType::kSin);
  ASSERT_EQ(root.arguments[0]->arguments.size(), 1u);
  EXPECT_EQ(root.arguments[0]->arguments[0]->type, TokenType::kMul);
}

TEST(SinParser, ReversePolishPutsSinAfterItsArgument) {
  ExpressionParser parser(kExample);
  EXPECT_EQ(SinRpnText(parser), "@0 @1 mul @2 sin add");
  ExpressionParser first("mul(sin(@0),@1)");
  EXPECT_EQ(SinRpnText(first), "@0 sin @1 mul");
}

TEST(SinParser, WrongCallsAreParseErrors) {
  const char* why = "see README \"Errors\"";
  EXPECT_EQ(SinErrorPosition("sin(@0,@1)"), 0) << why;  // two arguments: at the name
  EXPECT_EQ(SinErrorPosition("sin@0"), 3) << why;       // no bracket
  EXPECT_EQ(SinErrorPosition("sin()"), 4) << why;       // no argument
  EXPECT_EQ(SinErrorPosition("sin(@0"), 6) << why;      // not closed
  EXPECT_EQ(SinErrorPosition("sin"), 3) << why;
  EXPECT_EQ(SinErrorPosition("cos(@0,@1)"), 0) << why;
  EXPECT_EQ(SinErrorPosition("cos[@0]"), 3) << why;  // '[' is not a token at all
}

TEST(SinParser, DeepSinNestingIsRejectedNotOverflowed) {
  std::string text;
  for (int i = 0; i < 100000; ++i) text += "sin(";
  text += "@0";
  EXPECT_EQ(SinErrorPosition(text), 4 * ExpressionParser::kMaxDepth);
}

TEST(SinEvaluator, TensorElementTrigMatchesStdSinAndCos) {
  sftensor x = TensorCreate(2, 3, 4);
  for (uint32_t i = 0; i < x->size(); ++i) x->index(i) = -4.f + 0.37f * static_cast<float>(i);
  const sftensor s = TensorElementTrig(TokenType::kSin, x);
  const sftensor c = TensorElementTrig(TokenType::kCos, x);
  ASSERT_EQ(s->raw_shapes(), x->raw_shapes());
  ASSERT_EQ(c->raw_shapes(), x->raw_shapes());
  for (uint32_t i = 0; i < x->size(); ++i) {
    EXPECT_NEAR(s->index(i), std::sin(x->index(i)), 1e-6f) << "sin, element " << i;
    EXPECT_NEAR(c->index(i), std::cos(x->index(i)), 1e-6f) << "cos, element " << i;
  }
}

TEST(SinEvaluator, TensorElementTrigLeavesItsInputAlone) {
  sftensor x = TensorCreate({3});
  x->Fill({0.f, 1.f, 2.f});
  for (TokenType function : {TokenType::kSin, TokenType::kCos}) {
    const sftensor y = TensorElementTrig(function, x);
    EXPECT_NE(y, x) << "see README \"4. Evaluation\": a new tensor";
    EXPECT_EQ(x->values(), std::vector<float>({0.f, 1.f, 2.f}));
  }
}

TEST(SinEvaluator, TensorElementTrigRejectsAnEmptyTensor) {
  for (TokenType function : {TokenType::kSin, TokenType::kCos}) {
    EXPECT_THROW(TensorElementTrig(function, nullptr), ShapeError);
    EXPECT_THROW(TensorElementTrig(function, std::make_shared<ftensor>()), ShapeError);
  }
}

TEST(SinEvaluator, TensorElementTrigRejectsAFunctionThatIsNeitherSinNorCos) {
  sftensor x = TensorCreate({3});
  x->Fill({0.f, 1.f, 2.f});
  for (TokenType function : {TokenType::kExp, TokenType::kNeg, TokenType::kAdd}) {
    EXPECT_THROW(TensorElementTrig(function, x), std::invalid_argument)
        << TokenTypeName(function) << " is neither sin nor cos; see README \"4. Evaluation\"";
  }
}

TEST(SinEvaluator, SinSquaredPlusCosSquaredIsOne) {
  // An identity as the reference: whatever x is, the layer must give 1.
  ExpressionLayer layer("add(mul(sin(@0),sin(@0)),mul(cos(@0),cos(@0)))", 1);
  sftensor x = TensorCreate({5});
  x->Fill({-3.f, -0.5f, 0.f, 1.f, 2.5f});
  std::vector<sftensor> outputs(1);
  ASSERT_EQ(layer.Forward({x}, outputs), InferStatus::kInferSuccess);
  for (uint32_t i = 0; i < 5; ++i) EXPECT_NEAR(outputs[0]->index(i), 1.f, 1e-6f) << i;
}

TEST(SinEvaluator, ExampleMatchesFormula) {
  ExpressionLayer layer(kExample, 3);
  sftensor a = TensorCreate({3}), b = TensorCreate({3}), c = TensorCreate({3});
  a->Fill({1, 2, 3});
  b->Fill({-1, 0.5f, 2});
  c->Fill({0.f, 1.5f, -3.f});
  std::vector<sftensor> outputs(1);
  ASSERT_EQ(layer.Forward({a, b, c}, outputs), InferStatus::kInferSuccess);
  for (uint32_t e = 0; e < 3; ++e) {
    EXPECT_NEAR(outputs[0]->index(e), a->index(e) * b->index(e) + std::sin(c->index(e)), 1e-6f);
  }
}

TEST(SinEvaluator, TinySinMatchesPyTorch) {
  // tiny_sin computes add(sin(@0),mul(@0,@1)) with @0 = x and @1 = sigmoid(x);
  // the sigmoid is computed here so that this lab needs no other lab.
  const std::vector<sftensor> x = NpyToBatch(LoadNpy(kFixtures + "tiny_sin.input.npy"));
  const std::vector<sftensor> expected = NpyToBatch(LoadNpy(kFixtures + "tiny_sin.output.npy"));
  std::vector<sftensor> sigmoid;
  for (const sftensor& item : x) {
    sftensor s = TensorClone(item);
    s->Transform([](float v) { return 1.f / (1.f + std::exp(-v)); });
    sigmoid.push_back(s);
  }
  ExpressionLayer layer("add(sin(@0),mul(@0,@1))", 2);
  std::vector<sftensor> inputs = x;
  inputs.insert(inputs.end(), sigmoid.begin(), sigmoid.end());
  std::vector<sftensor> outputs(x.size());
  ASSERT_EQ(layer.Forward(inputs, outputs), InferStatus::kInferSuccess);
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_TRUE(TensorIsSame(outputs[i], expected[i], 1e-4f)) << "item " << i;
  }
}

}  // namespace
}  // namespace kuiper
