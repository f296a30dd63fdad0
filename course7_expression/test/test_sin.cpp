// course7_expression: sin in the lexer (ClassifyWord), the parser
// (ParseUnaryCall) and the evaluator (TensorElementSin). References: std::sin
// and PyTorch's output for models/fixtures/tiny_sin (torch.sin(x) + x * sigmoid(x)).
#include <gtest/gtest.h>

#include <cmath>

#include "kuiper/error.hpp"
#include "kuiper/expression.hpp"
#include "kuiper/layers/expression.hpp"
#include "kuiper/npy.hpp"

namespace kuiper {
namespace {

const std::string kFixtures = std::string(KUIPER_SOURCE_DIR) + "/models/fixtures/";
const std::string kExample = "add(mul(@0,@1),sin(@2))";

std::string RpnText(ExpressionParser& parser) {
  std::string text;
  for (const TokenNode* node : parser.ReversePolish()) {
    if (!text.empty()) text += " ";
    text += node->type == TokenType::kInput ? "@" + std::to_string(node->input_index)
                                            : std::string(TokenTypeName(node->type));
  }
  return text;
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

TEST(SinLexer, ClassifyWordKnowsSin) { EXPECT_EQ(ClassifyWord("sin"), TokenType::kSin); }

TEST(SinLexer, ClassifyWordStillKnowsTheCoreFunctions) {
  EXPECT_EQ(ClassifyWord("add"), TokenType::kAdd);
  EXPECT_EQ(ClassifyWord("rsqrt"), TokenType::kRsqrt);
}

TEST(SinLexer, ClassifyWordRejectsOtherWords) {
  for (const char* word : {"cos", "sinh", "si", "SIN", "sin2"}) {
    EXPECT_EQ(ClassifyWord(word), TokenType::kUnknown) << word;
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

TEST(SinLexer, UnknownWordReportsItsPosition) { EXPECT_EQ(ErrorPosition("add(@0,cos(@1))"), 7); }

TEST(SinParser, SinIsAUnaryNodeWithOnlyALeftChild) {
  ExpressionParser parser(kExample);
  const TokenNode& root = parser.Generate();
  ASSERT_EQ(root.type, TokenType::kAdd);
  const TokenNode& sin = *root.right;
  EXPECT_EQ(sin.type, TokenType::kSin);
  ASSERT_NE(sin.left, nullptr);
  EXPECT_EQ(sin.left->type, TokenType::kInput);
  EXPECT_EQ(sin.left->input_index, 2);
  EXPECT_EQ(sin.right, nullptr);
}

TEST(SinParser, NestedSinCalls) {
  ExpressionParser parser("sin(sin(mul(@0,2)))");
  const TokenNode& root = parser.Generate();
  EXPECT_EQ(root.type, TokenType::kSin);
  EXPECT_EQ(root.left->type, TokenType::kSin);
  EXPECT_EQ(root.left->left->type, TokenType::kMul);
}

TEST(SinParser, ReversePolishPutsSinAfterItsArgument) {
  ExpressionParser parser(kExample);
  EXPECT_EQ(RpnText(parser), "@0 @1 mul @2 sin add");
  ExpressionParser first("mul(sin(@0),@1)");
  EXPECT_EQ(RpnText(first), "@0 sin @1 mul");
}

TEST(SinParser, WrongCallsAreParseErrors) {
  EXPECT_EQ(ErrorPosition("sin(@0,@1)"), 6);  // a second argument
  EXPECT_EQ(ErrorPosition("sin@0"), 3);       // no bracket
  EXPECT_EQ(ErrorPosition("sin()"), 4);       // no argument
  EXPECT_EQ(ErrorPosition("sin(@0"), 6);      // not closed
  EXPECT_EQ(ErrorPosition("sin"), 3);
}

TEST(SinParser, DeepSinNestingIsRejectedNotOverflowed) {
  std::string text;
  for (int i = 0; i < 100000; ++i) text += "sin(";
  text += "@0";
  EXPECT_EQ(ErrorPosition(text), 4 * ExpressionParser::kMaxDepth);
}

TEST(SinEvaluator, TensorElementSinMatchesStdSin) {
  sftensor x = TensorCreate(2, 3, 4);
  for (uint32_t i = 0; i < x->size(); ++i) x->index(i) = -4.f + 0.37f * static_cast<float>(i);
  const sftensor y = TensorElementSin(x);
  ASSERT_EQ(y->raw_shapes(), x->raw_shapes());
  for (uint32_t i = 0; i < x->size(); ++i) EXPECT_NEAR(y->index(i), std::sin(x->index(i)), 1e-6f);
}

TEST(SinEvaluator, TensorElementSinLeavesItsInputAlone) {
  sftensor x = TensorCreate({3});
  x->Fill({0.f, 1.f, 2.f});
  const sftensor y = TensorElementSin(x);
  EXPECT_NE(y, x);
  EXPECT_EQ(x->values(), std::vector<float>({0.f, 1.f, 2.f}));
}

TEST(SinEvaluator, TensorElementSinRejectsAnEmptyTensor) {
  EXPECT_THROW(TensorElementSin(nullptr), ShapeError);
  EXPECT_THROW(TensorElementSin(std::make_shared<ftensor>()), ShapeError);
}

TEST(SinEvaluator, ExampleMatchesFormula) {
  ExpressionLayer layer(kExample, 3);
  sftensor a = TensorCreate({3}), b = TensorCreate({3}), c = TensorCreate({3});
  a->Fill({1, 2, 3});
  b->Fill({-1, 0.5f, 2});
  c->Fill({0.f, 1.5f, -3.f});
  std::vector<sftensor> outputs(1);
  ASSERT_EQ(layer.Forward({a, b, c}, outputs), InferStatus::kInferSuccess);
  for (uint32_t i = 0; i < 3; ++i) {
    EXPECT_NEAR(outputs[0]->index(i), a->index(i) * b->index(i) + std::sin(c->index(i)), 1e-6f);
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
