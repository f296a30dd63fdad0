// pnnx.Expression through the lab's parser (ParseCall) and stack machine
// (EvaluateReversePolish): evaluation with broadcasting, checks and creation.
// References: the formulas evaluated here per element.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "kuiper/error.hpp"
#include "kuiper/expression.hpp"
#include "kuiper/layer.hpp"
#include "kuiper/layers/expression.hpp"

namespace kuiper {
namespace {

sftensor Filled(const std::vector<uint32_t>& shape, const std::vector<float>& values) {
  sftensor t = TensorCreate(shape);
  t->Fill(values, /*row_major=*/true);
  return t;
}

sftensor LinearRamp(const std::vector<uint32_t>& shape, float start, float step) {
  sftensor t = TensorCreate(shape);
  std::vector<float> values(t->size());
  for (size_t i = 0; i < values.size(); ++i) values[i] = start + step * static_cast<float>(i);
  t->Fill(values, true);
  return t;
}

// The graph hands a layer its planned output tensors (RuntimeGraph::Build):
// the residual add writes into its slot instead of allocating each run.
TEST(ExpressionLayer, WritesItsResultIntoAnOutputOfTheResultsShape) {
  ExpressionLayer layer("add(@0,@1)", 2);
  const sftensor a = LinearRamp({2, 3, 4}, -2, 0.5f), b = LinearRamp({2, 3, 4}, 3, -0.25f);
  const sftensor planned = TensorCreate({2, 3, 4});
  planned->Fill(NAN);
  std::vector<sftensor> outputs{planned};
  ASSERT_EQ(layer.Forward({a, b}, outputs), InferStatus::kInferSuccess);
  EXPECT_EQ(outputs[0], planned) << "the planned output is written, not replaced";
  for (uint32_t i = 0; i < a->size(); ++i) {
    EXPECT_FLOAT_EQ(planned->index(i), a->index(i) + b->index(i)) << "element " << i;
  }
}

TEST(ExpressionLayer, ReplacesAnOutputOfAnotherShape) {
  ExpressionLayer layer("add(@0,@1)", 2);
  const sftensor a = LinearRamp({2, 3, 4}, -2, 0.5f), b = LinearRamp({4}, 1, 1);
  const sftensor wrong = TensorCreate({4});
  std::vector<sftensor> outputs{wrong};
  ASSERT_EQ(layer.Forward({a, b}, outputs), InferStatus::kInferSuccess);
  ASSERT_EQ(outputs[0]->raw_shapes(), std::vector<uint32_t>({2, 3, 4}));
  EXPECT_NE(outputs[0], wrong);
  const std::vector<float> got = outputs[0]->values(), x = a->values(), y = b->values();
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_FLOAT_EQ(got[i], x[i] + y[i % 4]) << "row-major element " << i;
  }
}

TEST(ExpressionLayer, EvaluatesNestedCallsPerElement) {
  ExpressionLayer layer("add(mul(@0,@1),@2)", 3);
  const sftensor a = LinearRamp({2, 3, 4}, -2, 0.5f), b = LinearRamp({2, 3, 4}, 3, -0.25f),
                 c = LinearRamp({2, 3, 4}, 1, 1);
  std::vector<sftensor> outputs(1);
  ASSERT_EQ(layer.Forward({a, b, c}, outputs), InferStatus::kInferSuccess);
  ASSERT_EQ(outputs[0]->raw_shapes(), std::vector<uint32_t>({2, 3, 4}));
  for (uint32_t i = 0; i < a->size(); ++i) {
    EXPECT_FLOAT_EQ(outputs[0]->index(i), a->index(i) * b->index(i) + c->index(i));
  }
}

TEST(ExpressionLayer, FusedReluClampsTheResultAtZero) {
  ExpressionLayer layer("add(@0,@1)", 2);
  ASSERT_TRUE(layer.FuseActivation(Activation::kRelu));
  EXPECT_FALSE(layer.FuseActivation(Activation::kSilu));  // one activation only
  const sftensor a = LinearRamp({2, 3, 4}, -6, 0.5f), b = LinearRamp({2, 3, 4}, 1, -0.25f);
  std::vector<sftensor> outputs(1);
  ASSERT_EQ(layer.Forward({a, b}, outputs), InferStatus::kInferSuccess);
  for (uint32_t i = 0; i < a->size(); ++i) {
    // a + b runs from -5 up by 0.25 (row-major): the ReLU zeroes the first 21.
    EXPECT_EQ(outputs[0]->index(i), std::max(a->index(i) + b->index(i), 0.f)) << "element " << i;
  }
  EXPECT_EQ(outputs[0]->index(23), 0.75f);  // the last element in both orders
}

TEST(ExpressionLayer, EveryBinaryFunctionMatchesItsFormula) {
  const sftensor a = Filled({4}, {1, 2, 3, 4}), b = Filled({4}, {0.5f, -2, 3, 2});
  const std::vector<std::pair<std::string, float (*)(float, float)>> cases = {
      {"add(@0,@1)", [](float x, float y) { return x + y; }},
      {"sub(@0,@1)", [](float x, float y) { return x - y; }},
      {"mul(@0,@1)", [](float x, float y) { return x * y; }},
      {"div(@0,@1)", [](float x, float y) { return x / y; }},
      {"pow(@0,@1)", [](float x, float y) { return std::pow(x, y); }},
  };
  for (const auto& [expr, reference] : cases) {
    ExpressionLayer layer(expr, 2);
    std::vector<sftensor> outputs(1);
    ASSERT_EQ(layer.Forward({a, b}, outputs), InferStatus::kInferSuccess) << expr;
    for (uint32_t i = 0; i < 4; ++i) {
      EXPECT_FLOAT_EQ(outputs[0]->index(i), reference(a->index(i), b->index(i))) << expr;
    }
  }
}

TEST(ExpressionLayer, NumbersBroadcastToEveryElement) {
  ExpressionLayer layer("sub(mul(@0,4),2.000000e+00)", 1);
  std::vector<sftensor> outputs(1);
  ASSERT_EQ(layer.Forward({Filled({1, 1, 3}, {0, 0.5f, 1})}, outputs), InferStatus::kInferSuccess);
  EXPECT_EQ(outputs[0]->values(), std::vector<float>({-2, 0, 2}));
}

TEST(ExpressionLayer, ChannelVectorBroadcastsOverRowsAndColumns) {
  ExpressionLayer layer("mul(@0,@1)", 2);
  const sftensor x = LinearRamp({2, 2, 3}, 0, 1);
  const sftensor scale = Filled({2, 1, 1}, {10, -1});
  std::vector<sftensor> outputs(1);
  ASSERT_EQ(layer.Forward({x, scale}, outputs), InferStatus::kInferSuccess);
  ASSERT_EQ(outputs[0]->raw_shapes(), std::vector<uint32_t>({2, 2, 3}));
  for (uint32_t c = 0; c < 2; ++c)
    for (uint32_t r = 0; r < 2; ++r)
      for (uint32_t col = 0; col < 3; ++col)
        EXPECT_EQ(outputs[0]->at(c, r, col), x->at(c, r, col) * (c == 0 ? 10.f : -1.f));
}

TEST(ExpressionLayer, BroadcastsRowAgainstColumnAndAlignsTrailingDimensions) {
  ExpressionLayer layer("add(@0,@1)", 2);
  std::vector<sftensor> outputs(1);
  // (1,3,1) + (1,1,2) -> (1,3,2), the first operand broadcast on the right.
  ASSERT_EQ(layer.Forward({Filled({1, 3, 1}, {0, 10, 20}), Filled({1, 1, 2}, {1, 2})}, outputs),
            InferStatus::kInferSuccess);
  EXPECT_EQ(outputs[0]->raw_shapes(), std::vector<uint32_t>({1, 3, 2}));
  EXPECT_EQ(outputs[0]->values(true), std::vector<float>({1, 2, 11, 12, 21, 22}));
  // (2,2,2) + (2): a vector lines up with the last dimension, as in NumPy.
  ExpressionLayer swapped("add(@1,@0)", 2);
  ASSERT_EQ(swapped.Forward({LinearRamp({2, 2, 2}, 0, 1), Filled({2}, {100, 200})}, outputs),
            InferStatus::kInferSuccess);
  EXPECT_EQ(outputs[0]->values(true), std::vector<float>({100, 201, 102, 203, 104, 205, 106, 207}));
}

TEST(ExpressionLayer, EvaluatesEveryItemOfABatch) {
  // Operands A and B, batch 2: inputs are {A0, A1, B0, B1}.
  ExpressionLayer layer("sub(@0,@1)", 2);
  std::vector<sftensor> outputs(2);
  ASSERT_EQ(
      layer.Forward({Filled({1}, {10}), Filled({1}, {20}), Filled({1}, {1}), Filled({1}, {2})},
                    outputs),
      InferStatus::kInferSuccess);
  EXPECT_EQ(outputs[0]->values(), std::vector<float>({9}));
  EXPECT_EQ(outputs[1]->values(), std::vector<float>({18}));
}

TEST(ExpressionLayer, LeavesInputsUnchangedAndUnshared) {
  ExpressionLayer layer("@0", 1);
  const sftensor x = Filled({2}, {1, 2});
  std::vector<sftensor> outputs(1);
  ASSERT_EQ(layer.Forward({x}, outputs), InferStatus::kInferSuccess);
  EXPECT_NE(outputs[0], x);
  EXPECT_EQ(outputs[0]->values(), x->values());
  ExpressionLayer add("add(@0,@0)", 1);
  ASSERT_EQ(add.Forward({x}, outputs), InferStatus::kInferSuccess);
  EXPECT_EQ(x->values(), std::vector<float>({1, 2}));
}

TEST(ExpressionLayer, ShapesThatDoNotBroadcastAreAShapeError) {
  ExpressionLayer layer("add(@0,@1)", 2);
  std::vector<sftensor> outputs(1);
  EXPECT_EQ(layer.Forward({LinearRamp({2, 3, 4}, 0, 1), LinearRamp({3, 3, 4}, 0, 1)}, outputs),
            InferStatus::kInferFailedShapeError);
  EXPECT_EQ(layer.Forward({LinearRamp({4}, 0, 1), LinearRamp({3}, 0, 1)}, outputs),
            InferStatus::kInferFailedShapeError);
}

TEST(ExpressionLayer, InputChecksAreReported) {
  ExpressionLayer layer("add(@0,@1)", 2);
  std::vector<sftensor> outputs(1), none;
  const sftensor x = Filled({1}, {1});
  EXPECT_EQ(layer.Forward({}, outputs), InferStatus::kInferFailedInputEmpty);
  EXPECT_EQ(layer.Forward({x, nullptr}, outputs), InferStatus::kInferFailedInputEmpty);
  EXPECT_EQ(layer.Forward({x, x}, none), InferStatus::kInferFailedOutputEmpty);
  EXPECT_EQ(layer.Forward({x, x, x}, outputs), InferStatus::kInferFailedBatchMatchError);
  EXPECT_EQ(layer.Forward({x, x, x, x}, outputs), InferStatus::kInferFailedInputOutSizeMatchError);
}

TEST(ExpressionLayer, RegistryCreatesItFromTheOperator) {
  RuntimeOperand a, b;
  RuntimeOperator op;
  op.type = "pnnx.Expression";
  op.name = "expr";
  op.input_operands = {&a, &b};
  op.params["expr"] = std::string("div(@1,@0)");
  std::unique_ptr<Layer> layer = LayerRegisterer::CreateLayer(op);
  std::vector<sftensor> outputs(1);
  ASSERT_EQ(layer->Forward({Filled({1}, {4}), Filled({1}, {2})}, outputs),
            InferStatus::kInferSuccess);
  EXPECT_EQ(outputs[0]->values(), std::vector<float>({0.5f}));
}

TEST(ExpressionLayer, MalformedExpressionFailsAtCreationNamingTheOperator) {
  RuntimeOperand a;
  RuntimeOperator op;
  op.type = "pnnx.Expression";
  op.name = "expr_7";
  op.input_operands = {&a};
  op.params["expr"] = std::string("add(@0,@1)");  // one input only
  try {
    LayerRegisterer::CreateLayer(op);
    FAIL() << "expected ParseError";
  } catch (const ParseError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("expr_7"), std::string::npos) << message;
    EXPECT_NE(message.find("position 7"), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace kuiper
