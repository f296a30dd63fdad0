// course7_expression: the stack machine (EvaluateReversePolish) on sequences
// built here node by node, so these tests need no parser. References: every
// expected value is the formula worked out by hand in the comment beside it.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "kuiper/error.hpp"
#include "kuiper/expression.hpp"

namespace kuiper {
namespace {

const char* kStack = "see README \"4. Evaluation\"";

// The nodes of one reverse-Polish sequence, kept alive with it.
class Sequence {
 public:
  Sequence& Input(int n) {
    auto node = std::make_unique<TokenNode>();
    node->type = TokenType::kInput;
    node->input_index = n;
    return Add(std::move(node));
  }
  Sequence& Number(float value) {
    auto node = std::make_unique<TokenNode>();
    node->type = TokenType::kNumber;
    node->value = value;
    return Add(std::move(node));
  }
  Sequence& Call(TokenType type) {
    auto node = std::make_unique<TokenNode>();
    node->type = type;
    return Add(std::move(node));
  }
  const std::vector<const TokenNode*>& rpn() const { return rpn_; }

 private:
  Sequence& Add(std::unique_ptr<TokenNode> node) {
    rpn_.push_back(node.get());
    nodes_.push_back(std::move(node));
    return *this;
  }
  std::vector<std::unique_ptr<TokenNode>> nodes_;
  std::vector<const TokenNode*> rpn_;
};

sftensor Values(const std::vector<float>& values) {
  sftensor t = TensorCreate({static_cast<uint32_t>(values.size())});
  t->Fill(values);
  return t;
}

// The message of the Error `rpn` throws, or "" if none.
std::string StackError(const Sequence& sequence, const std::vector<std::vector<sftensor>>& operands,
                       size_t batch) {
  try {
    EvaluateReversePolish(sequence.rpn(), operands, batch);
  } catch (const ShapeError& e) {
    return std::string("ShapeError: ") + e.what();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(StackMachine, AnOperandAloneIsItsValue) {
  Sequence s;
  s.Input(1);
  const sftensor a = Values({1, 2}), b = Values({3, 4});
  const std::vector<sftensor> out = EvaluateReversePolish(s.rpn(), {{a}, {b}}, 1);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0]->values(), std::vector<float>({3, 4})) << kStack;
}

TEST(StackMachine, ANumberIsAOneElementTensorForEveryItem) {
  Sequence s;
  s.Number(2.5f);
  const std::vector<sftensor> out = EvaluateReversePolish(s.rpn(), {}, 3);
  ASSERT_EQ(out.size(), 3u) << "one value per item: " << kStack;
  for (const sftensor& item : out) EXPECT_EQ(item->values(), std::vector<float>({2.5f}));
}

// In "@0 @1 sub" @0 is pushed first, so it lies BELOW @1: the first argument.
TEST(StackMachine, NonCommutativeFunctionsTakeTheFirstPushedFirst) {
  const sftensor a = Values({8, 9}), b = Values({2, 3});
  const std::vector<std::pair<TokenType, std::vector<float>>> cases = {
      {TokenType::kSub, {6, 6}},     // 8-2, 9-3
      {TokenType::kDiv, {4, 3}},     // 8/2, 9/3
      {TokenType::kPow, {64, 729}},  // 8^2, 9^3
      {TokenType::kLt, {0, 0}},      // 8<2, 9<3
      {TokenType::kFmod, {0, 0}},    // 8 mod 2, 9 mod 3
  };
  for (const auto& [function, want] : cases) {
    Sequence s;
    s.Input(0).Input(1).Call(function);
    EXPECT_EQ(EvaluateReversePolish(s.rpn(), {{a}, {b}}, 1)[0]->values(), want)
        << TokenTypeName(function) << ": " << kStack;
  }
}

TEST(StackMachine, ANumberAsTheFirstArgumentStaysFirst) {
  Sequence s;  // sub(10, @0) = 10 - @0
  s.Number(10).Input(0).Call(TokenType::kSub);
  EXPECT_EQ(EvaluateReversePolish(s.rpn(), {{Values({1, 4})}}, 1)[0]->values(),
            std::vector<float>({9, 6}));
}

TEST(StackMachine, WhereTakesConditionThenBothBranches) {
  Sequence s;  // where(@0, @1, @2)
  s.Input(0).Input(1).Input(2).Call(TokenType::kWhere);
  const std::vector<sftensor> out = EvaluateReversePolish(
      s.rpn(), {{Values({1, 0, 1})}, {Values({10, 20, 30})}, {Values({-1, -2, -3})}}, 1);
  EXPECT_EQ(out[0]->values(), std::vector<float>({10, -2, 30})) << kStack;
}

TEST(StackMachine, OneArgumentFunctionsIncludingSinAndCos) {
  Sequence s;  // add(sin(@0), neg(cos(@0)))
  s.Input(0).Call(TokenType::kSin).Input(0).Call(TokenType::kCos).Call(TokenType::kNeg);
  s.Call(TokenType::kAdd);
  const std::vector<float> x = {0.f, 0.5f, -2.f};
  const std::vector<float> got = EvaluateReversePolish(s.rpn(), {{Values(x)}}, 1)[0]->values();
  ASSERT_EQ(got.size(), 3u);
  for (size_t i = 0; i < 3; ++i) EXPECT_NEAR(got[i], std::sin(x[i]) - std::cos(x[i]), 1e-6f) << i;
}

// The YOLOv5 head's mul(pow(mul(@0,2),2),@1): @0 2 mul 2 pow @1 mul.
TEST(StackMachine, NestedSequenceOfTheYoloHead) {
  Sequence s;
  s.Input(0).Number(2).Call(TokenType::kMul).Number(2).Call(TokenType::kPow);
  s.Input(1).Call(TokenType::kMul);
  const std::vector<sftensor> out =
      EvaluateReversePolish(s.rpn(), {{Values({0.5f, 1, 1.5f})}, {Values({10, 20, 30})}}, 1);
  // (2*0.5)^2*10 = 10, (2*1)^2*20 = 80, (2*1.5)^2*30 = 270.
  EXPECT_EQ(out[0]->values(), std::vector<float>({10, 80, 270}));
}

TEST(StackMachine, EvaluatesEveryItemOfTheBatch) {
  Sequence s;  // sub(@0, @1), batch 3
  s.Input(0).Input(1).Call(TokenType::kSub);
  const std::vector<sftensor> out = EvaluateReversePolish(
      s.rpn(),
      {{Values({10}), Values({20}), Values({30})}, {Values({1}), Values({2}), Values({3})}}, 3);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0]->values(), std::vector<float>({9}));
  EXPECT_EQ(out[1]->values(), std::vector<float>({18}));
  EXPECT_EQ(out[2]->values(), std::vector<float>({27}));
}

TEST(StackMachine, OperandsAreNeverModified) {
  Sequence s;  // add(@0, @0)
  s.Input(0).Input(0).Call(TokenType::kAdd);
  const sftensor x = Values({1, 2});
  const std::vector<sftensor> out = EvaluateReversePolish(s.rpn(), {{x}}, 1);
  EXPECT_EQ(out[0]->values(), std::vector<float>({2, 4}));
  EXPECT_EQ(x->values(), std::vector<float>({1, 2}));
}

TEST(StackMachine, TheLastFunctionWritesIntoTheGivenOutputs) {
  Sequence s;  // mul(@0, @1) into a planned output
  s.Input(0).Input(1).Call(TokenType::kMul);
  const std::vector<sftensor> into = {TensorCreate({2})};
  const std::vector<sftensor> out =
      EvaluateReversePolish(s.rpn(), {{Values({2, 3})}, {Values({4, 5})}}, 1, &into);
  EXPECT_EQ(out[0], into[0]) << "the planned output is reused: " << kStack;
  EXPECT_EQ(into[0]->values(), std::vector<float>({8, 15}));
}

TEST(StackMachineErrors, AMissingOperandIsAShapeError) {
  Sequence s;
  s.Input(0).Input(2).Call(TokenType::kAdd);
  EXPECT_THROW(EvaluateReversePolish(s.rpn(), {{Values({1})}, {Values({2})}}, 1), ShapeError)
      << "@2 of two operands: " << kStack;
}

TEST(StackMachineErrors, AFunctionWithTooFewValuesIsAnErrorNamingIt) {
  Sequence s;
  s.Input(0).Call(TokenType::kAdd);
  const std::string message = StackError(s, {{Values({1})}}, 1);
  EXPECT_NE(message.find("add"), std::string::npos) << "'" << message << "': " << kStack;
  EXPECT_EQ(message.find("ShapeError"), std::string::npos) << message;
  Sequence where;
  where.Input(0).Input(0).Call(TokenType::kWhere);
  EXPECT_NE(StackError(where, {{Values({1})}}, 1).find("where"), std::string::npos);
}

TEST(StackMachineErrors, ValuesLeftOverAtTheEndAreAnError) {
  Sequence s;  // two values, no function to join them
  s.Input(0).Input(1);
  const std::string message = StackError(s, {{Values({1})}, {Values({2})}}, 1);
  EXPECT_NE(message.find("2 values"), std::string::npos) << "'" << message << "': " << kStack;
}

TEST(StackMachineErrors, AnEmptySequenceIsAnError) {
  Sequence s;
  const std::string message = StackError(s, {{Values({1})}}, 1);
  EXPECT_NE(message.find("0 values"), std::string::npos) << "'" << message << "': " << kStack;
}

}  // namespace
}  // namespace kuiper
