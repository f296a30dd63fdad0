// Hidden tests of course7_expression: behaviours the handout states that the
// public tests leave open. Each catches a wrong solution kept in
// grading/wrong/course7_expression/ (WRONG.md names which).
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "kuiper/error.hpp"
#include "kuiper/expression.hpp"

namespace kuiper {
namespace {

std::vector<const TokenNode*> HiddenRpn(std::vector<std::unique_ptr<TokenNode>>& nodes,
                                        const std::vector<TokenType>& types) {
  std::vector<const TokenNode*> rpn;
  int operand = 0;
  for (TokenType type : types) {
    auto node = std::make_unique<TokenNode>();
    node->type = type;
    if (type == TokenType::kInput) node->input_index = operand++;
    rpn.push_back(node.get());
    nodes.push_back(std::move(node));
  }
  return rpn;
}

sftensor HiddenValues(const std::vector<uint32_t>& shape, float first) {
  sftensor t = TensorCreate(shape);
  for (uint32_t i = 0; i < t->size(); ++i) t->index(i) = first + 0.5f * static_cast<float>(i);
  return t;
}

// README "2. Tree": the arity error is at the function's NAME, here a call
// that starts at character 7, not at the start of the statement.
TEST(HiddenCall, WrongArityOfANestedCallIsReportedAtItsName) {
  try {
    ExpressionParser("add(@0,neg(@1,@2))").Generate();
    FAIL() << "neg with two arguments was accepted";
  } catch (const ParseError& e) {
    EXPECT_NE(std::string(e.what()).find("position 7: 'neg' takes 1 argument(s), got 2"),
              std::string::npos)
        << e.what();
  }
}

// README §3.4 "Evaluation": an operand that does not hold `batch` tensors is a
// ShapeError, like a missing one.
TEST(HiddenStack, AnOperandOfAnotherBatchIsAShapeError) {
  std::vector<std::unique_ptr<TokenNode>> nodes;
  const auto rpn = HiddenRpn(nodes, {TokenType::kInput, TokenType::kInput, TokenType::kAdd});
  const sftensor x = HiddenValues({3}, 1);
  EXPECT_THROW(EvaluateReversePolish(rpn, {{x, x}, {x}}, 2), ShapeError);
}

// README §3.4 "Evaluation": only the LAST function writes into the planned
// outputs; the ones before it must leave them alone.
TEST(HiddenStack, IntoIsWrittenOnlyByTheLastFunction) {
  std::vector<std::unique_ptr<TokenNode>> nodes;
  const auto rpn = HiddenRpn(
      nodes, {TokenType::kInput, TokenType::kInput, TokenType::kAdd, TokenType::kNeg});
  const std::vector<sftensor> into = {TensorCreate({3})};
  into[0]->Fill(7.f);
  const std::vector<sftensor> out =
      EvaluateReversePolish(rpn, {{HiddenValues({3}, 1)}, {HiddenValues({3}, 10)}}, 1, &into);
  EXPECT_EQ(out[0]->values(), std::vector<float>({-11, -12, -13}));  // -(1+10), -(1.5+10.5), ...
  EXPECT_EQ(into[0]->values(), std::vector<float>({7, 7, 7}))
      << "add is not the last function: it must not write into the planned output";
}

// README §3.4 "Evaluation": a token that is neither a value nor a function is
// an Error, never skipped.
TEST(HiddenStack, ATokenThatIsNeitherValueNorFunctionIsAnError) {
  for (TokenType stray : {TokenType::kComma, TokenType::kRightBracket, TokenType::kUnknown}) {
    std::vector<std::unique_ptr<TokenNode>> nodes;
    const auto rpn = HiddenRpn(nodes, {TokenType::kInput, stray});
    try {
      EvaluateReversePolish(rpn, {{HiddenValues({2}, 0)}}, 1);
      ADD_FAILURE() << "no Error for a stray " << TokenTypeName(stray);
    } catch (const NotImplemented&) {
      throw;  // the skeleton's Error is not this one: the test must fail there
    } catch (const Error&) {
    }
  }
}

// README §3.4 "Evaluation": sin and cos keep the item's shape, whatever its rank.
TEST(HiddenTrig, KeepsTheShapeOfAFourDimensionalItem) {
  const sftensor x = HiddenValues({2, 3, 4, 5}, -3);
  for (TokenType function : {TokenType::kSin, TokenType::kCos}) {
    const sftensor y = TensorElementTrig(function, x);
    ASSERT_EQ(y->raw_shapes(), std::vector<uint32_t>({2, 3, 4, 5})) << TokenTypeName(function);
    for (uint32_t i = 0; i < x->size(); i += 17) {
      const float want = function == TokenType::kSin ? std::sin(x->index(i)) : std::cos(x->index(i));
      EXPECT_NEAR(y->index(i), want, 1e-6f) << i;
    }
  }
}

}  // namespace
}  // namespace kuiper
