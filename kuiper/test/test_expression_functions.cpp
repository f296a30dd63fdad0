// The expression layer's functions for element-wise operators of ONNX and
// PyTorch: comparisons and logic give 0/1, max/min propagate NaN,
// fmod/remainder take the dividend's/divisor's sign, round is half to even,
// and where(c, a, b) takes three arguments with NumPy broadcasting. Each
// checked against values computed here by hand or with <cmath>.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "kuiper/error.hpp"
#include "kuiper/expression.hpp"

namespace kuiper {
namespace {

constexpr float kFnNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kFnInf = std::numeric_limits<float>::infinity();

sftensor FnTensor(const std::vector<uint32_t>& shape, const std::vector<float>& values) {
  sftensor t = TensorCreate(shape);
  t->Fill(values, /*row_major=*/true);
  return t;
}

// NaN equals NaN here: the functions must keep it, not drop it.
void FnExpectSame(const std::vector<float>& got, const std::vector<float>& want,
                  const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << what << " element " << i << ": got " << got[i];
    } else {
      EXPECT_EQ(got[i], want[i]) << what << " element " << i;
    }
  }
}

std::vector<float> FnBinary(const std::string& name, const std::vector<float>& a,
                            const std::vector<float>& b) {
  const TokenType type = CoreFunctionToken(name);
  EXPECT_EQ(FunctionArity(type), 2) << name;
  const uint32_t n = static_cast<uint32_t>(a.size());
  return TensorElementBinary(type, FnTensor({n}, a), FnTensor({n}, b))->values();
}

std::vector<float> FnUnary(const std::string& name, const std::vector<float>& x) {
  const TokenType type = CoreFunctionToken(name);
  EXPECT_EQ(FunctionArity(type), 1) << name;
  return TensorElementUnary(type, FnTensor({static_cast<uint32_t>(x.size())}, x))->values();
}

TEST(ExpressionFunctions, ComparisonsGiveOneOrZeroAndNaNComparesFalse) {
  const std::vector<float> a = {1, 2, 3, kFnNaN, -kFnInf};
  const std::vector<float> b = {2, 2, 2, kFnNaN, -kFnInf};
  FnExpectSame(FnBinary("eq", a, b), {0, 1, 0, 0, 1}, "eq");
  FnExpectSame(FnBinary("ne", a, b), {1, 0, 1, 1, 0}, "ne");
  FnExpectSame(FnBinary("lt", a, b), {1, 0, 0, 0, 0}, "lt");
  FnExpectSame(FnBinary("gt", a, b), {0, 0, 1, 0, 0}, "gt");
  FnExpectSame(FnBinary("le", a, b), {1, 1, 0, 0, 1}, "le");
  FnExpectSame(FnBinary("ge", a, b), {0, 1, 1, 0, 1}, "ge");
}

TEST(ExpressionFunctions, LogicReadsNonzeroAsTrue) {
  const std::vector<float> a = {0, 0, 1, 1, 2.5f};
  const std::vector<float> b = {0, 1, 0, 1, -3};
  FnExpectSame(FnBinary("and", a, b), {0, 0, 0, 1, 1}, "and");
  FnExpectSame(FnBinary("or", a, b), {0, 1, 1, 1, 1}, "or");
  FnExpectSame(FnBinary("xor", a, b), {0, 1, 1, 0, 0}, "xor");
  FnExpectSame(FnUnary("not", a), {1, 1, 0, 0, 0}, "not");
}

TEST(ExpressionFunctions, MaxAndMinPropagateNaNAsNumPyDoes) {
  const std::vector<float> a = {1, 5, kFnNaN, 2, -kFnInf};
  const std::vector<float> b = {3, -5, 1, kFnNaN, 0};
  FnExpectSame(FnBinary("max", a, b), {3, 5, kFnNaN, kFnNaN, 0}, "max");
  FnExpectSame(FnBinary("min", a, b), {1, -5, kFnNaN, kFnNaN, -kFnInf}, "min");
}

TEST(ExpressionFunctions, FmodTakesTheDividendsSignAndRemainderTheDivisors) {
  const std::vector<float> a = {7, -7, 7, -7, 6, 5.5f};
  const std::vector<float> b = {3, 3, -3, -3, 3, 2};
  FnExpectSame(FnBinary("fmod", a, b), {1, -1, 1, -1, 0, 1.5f}, "fmod (C)");
  FnExpectSame(FnBinary("remainder", a, b), {1, 2, -2, -1, 0, 1.5f}, "remainder (Python %)");
}

TEST(ExpressionFunctions, RoundGoesHalfToEvenAndTruncTowardZero) {
  const std::vector<float> x = {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 2.4f, -2.6f};
  FnExpectSame(FnUnary("round", x), {0, 2, 2, -0.f, -2, 2, -3}, "round");
  FnExpectSame(FnUnary("trunc", x), {0, 1, 2, -0.f, -1, 2, -2}, "trunc");
  FnExpectSame(FnUnary("floor", x), {0, 1, 2, -1, -2, 2, -3}, "floor");
  FnExpectSame(FnUnary("ceil", x), {1, 2, 3, -0.f, -1, 3, -2}, "ceil");
}

TEST(ExpressionFunctions, SignKeepsZeroAndNaN) {
  FnExpectSame(FnUnary("sign", {-3, 0, 2, kFnNaN, -kFnInf}), {-1, 0, 1, kFnNaN, -1}, "sign");
}

TEST(ExpressionFunctions, MathFunctionsMatchCmath) {
  const std::vector<float> x = {-0.9f, -0.3f, 0.f, 0.4f, 0.8f};
  const std::vector<std::pair<std::string, float (*)(float)>> cases = {
      {"tanh", std::tanh},   {"erf", std::erf},    {"tan", std::tan},   {"sinh", std::sinh},
      {"cosh", std::cosh},   {"asin", std::asin},  {"acos", std::acos}, {"atan", std::atan},
      {"asinh", std::asinh}, {"atanh", std::atanh}};
  for (const auto& [name, fn] : cases) {
    std::vector<float> want;
    for (float v : x) want.push_back(fn(v));
    FnExpectSame(FnUnary(name, x), want, name);
  }
  std::vector<float> want;
  for (float v : {1.f, 1.5f, 3.f}) want.push_back(std::acosh(v));
  FnExpectSame(FnUnary("acosh", {1.f, 1.5f, 3.f}), want, "acosh");
}

// where(c, a, b) over c (2,1,3), a (3) and b (2,4,1): the result is (2,4,3).
TEST(ExpressionFunctions, WhereBroadcastsItsThreeArguments) {
  const std::vector<float> c = {1, 0, 2, 0, 0, -1};
  const std::vector<float> a = {10, 20, 30};
  const std::vector<float> b = {-1, -2, -3, -4, -5, -6, -7, -8};
  const sftensor out =
      TensorElementWhere(FnTensor({2, 1, 3}, c), FnTensor({3}, a), FnTensor({2, 4, 1}, b));
  ASSERT_EQ(out->raw_shapes(), (std::vector<uint32_t>{2, 4, 3}));
  std::vector<float> want;
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 4; ++j) {
      for (int k = 0; k < 3; ++k) want.push_back(c[i * 3 + k] != 0 ? a[k] : b[i * 4 + j]);
    }
  }
  FnExpectSame(out->values(), want, "where");
}

TEST(ExpressionFunctions, WhereOfShapesThatDoNotBroadcastIsAShapeError) {
  EXPECT_THROW(
      TensorElementWhere(FnTensor({2}, {1, 0}), FnTensor({3}, {1, 2, 3}), FnTensor({1}, {0})),
      ShapeError);
}

TEST(TensorElementBinary, NeverWritesIntoAnArgument) {
  // b broadcasts along a's leading dimensions: writing into b would change it
  // before it is read for the next row.
  const sftensor a = FnTensor({3, 4}, {-2, -1.5f, -1, -0.5f, 0, 0.5f, 1, 1.5f, 2, 2.5f, 3, 3.5f});
  const sftensor b = FnTensor({1, 4}, {1, 2, 3, 4});
  const std::vector<float> b_before = b->values();
  const sftensor out = TensorElementBinary(TokenType::kAdd, a, b, b);
  EXPECT_NE(out, b);
  EXPECT_EQ(b->values(), b_before);
}

// ApplyFunction: the core's step of the lab's stack machine (course7).
TEST(ApplyFunction, TakesTheArgumentsInTheOrderGivenForEveryItem) {
  const std::vector<std::vector<sftensor>> arguments = {
      {FnTensor({2}, {10, 20}), FnTensor({2}, {1, 2})}, {FnTensor({1}, {4}), FnTensor({1}, {8})}};
  const std::vector<sftensor> out = ApplyFunction(TokenType::kSub, arguments, 2);
  ASSERT_EQ(out.size(), 2u);
  FnExpectSame(out[0]->values(), {6, 16}, "item 0: 10-4, 20-4");
  FnExpectSame(out[1]->values(), {-7, -6}, "item 1: 1-8, 2-8");
}

TEST(ApplyFunction, WhereTakesConditionThenBothBranches) {
  const std::vector<std::vector<sftensor>> arguments = {
      {FnTensor({3}, {1, 0, 2})}, {FnTensor({3}, {1, 2, 3})}, {FnTensor({1}, {-1})}};
  FnExpectSame(ApplyFunction(TokenType::kWhere, arguments, 1)[0]->values(), {1, -1, 3}, "where");
}

TEST(ApplyFunction, WritesATwoArgumentResultIntoTheGivenTensor) {
  const sftensor into = TensorCreate({2});
  const std::vector<sftensor> intos = {into};
  const std::vector<sftensor> out =
      ApplyFunction(TokenType::kMul, {{FnTensor({2}, {3, 4})}, {FnTensor({2}, {5, 6})}}, 1, &intos);
  EXPECT_EQ(out[0], into);
  FnExpectSame(into->values(), {15, 24}, "mul into");
}

TEST(ApplyFunction, AnArgumentCountOtherThanTheArityIsRejected) {
  const std::vector<sftensor> x = {FnTensor({1}, {1})};
  EXPECT_THROW(ApplyFunction(TokenType::kAdd, {x}, 1), std::invalid_argument);
  EXPECT_THROW(ApplyFunction(TokenType::kNeg, {x, x}, 1), std::invalid_argument);
  EXPECT_THROW(ApplyFunction(TokenType::kInput, {x}, 1), std::invalid_argument);
  EXPECT_THROW(ApplyFunction(TokenType::kNeg, {x}, 2), std::invalid_argument);  // batch 2
}

}  // namespace
}  // namespace kuiper
