// course5_layers: Sigmoid, SigmoidLayer::Forward and its registration.
// Expected values come from 1 / (1 + std::exp(-x)) written in the test, in
// float or in double.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "kuiper/error.hpp"
#include "kuiper/layer.hpp"
#include "kuiper/layers/sigmoid.hpp"

namespace kuiper {
namespace {

float Reference(float x) { return 1.f / (1.f + std::exp(-x)); }

// The logistic function in double, rounded once to float.
float DoubleReference(float x) { return float(1.0 / (1.0 + std::exp(-double(x)))); }

// Sigmoid over a span of the given values; y starts as NaN, so an element the
// loop skips cannot pass for a value.
std::vector<float> SigmoidOf(const std::vector<float>& x) {
  std::vector<float> y(x.size(), std::numeric_limits<float>::quiet_NaN());
  Sigmoid(x.data(), y.data(), x.size());
  return y;
}

sftensor Ramp(uint32_t c, uint32_t h, uint32_t w, float start, float step) {
  sftensor t = TensorCreate(c, h, w);
  for (uint32_t i = 0; i < t->size(); ++i) t->index(i) = start + step * static_cast<float>(i);
  return t;
}

TEST(Sigmoid, MatchesFormula) {
  const std::vector<float> x = {-20.f, -3.5f, -1.f, 0.f, 0.25f, 1.f, 4.f, 20.f};
  const std::vector<float> y = SigmoidOf(x);
  for (size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(y[i], Reference(x[i]), 1e-6f) << "x = " << x[i];
}

TEST(Sigmoid, ZeroGivesOneHalf) { EXPECT_FLOAT_EQ(SigmoidOf({0.f})[0], 0.5f); }

TEST(Sigmoid, SaturatesWithoutNan) {
  const char* why = "see README \"The sigmoid and its ends\"";
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> y = SigmoidOf({-1000.f, 1000.f, -inf, inf});
  EXPECT_EQ(y[0], 0.f) << "x = -1000; " << why;
  EXPECT_EQ(y[1], 1.f) << "x = 1000; " << why;
  EXPECT_EQ(y[2], 0.f) << "x = -inf; " << why;
  EXPECT_EQ(y[3], 1.f) << "x = inf; " << why;
}

TEST(Sigmoid, EndsSaturateAtEveryPositionOfALongSpan) {
  // The four ends at every position of a span of 67: in the vectorised body
  // (67 = 4 * 16 + 3, whatever the vector width) and in its tail.
  const float inf = std::numeric_limits<float>::infinity();
  const float ends[4] = {-1000.f, 1000.f, -inf, inf};
  const float expected[4] = {0.f, 1.f, 0.f, 1.f};
  for (size_t shift = 0; shift < 4; ++shift) {
    std::vector<float> x(67);
    for (size_t i = 0; i < x.size(); ++i) x[i] = ends[(i + shift) % 4];
    const std::vector<float> y = SigmoidOf(x);
    for (size_t i = 0; i < x.size(); ++i) {
      EXPECT_EQ(y[i], expected[(i + shift) % 4])
          << "x[" << i << "] = " << x[i] << "; see README \"The sigmoid and its ends\"";
    }
  }
}

TEST(Sigmoid, LongSpanWithATailMatchesDoublePrecision) {
  // 1037 = 64 * 16 + 13 values from -20 to 20: not a multiple of 4, 8 or 16
  // floats, so a loop that stops at the last whole vector leaves NaNs.
  std::vector<float> x(1037);
  for (size_t i = 0; i < x.size(); ++i) x[i] = -20.f + 40.f * static_cast<float>(i) / 1036.f;
  const std::vector<float> y = SigmoidOf(x);
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_NEAR(y[i], DoubleReference(x[i]), 1e-6f) << "x[" << i << "] = " << x[i];
  }
}

TEST(Sigmoid, SpanMayBeComputedInPlace) {
  // The Detect head passes the same pointer as x and y.
  std::vector<float> v(21);
  for (size_t i = 0; i < v.size(); ++i) v[i] = -5.f + 0.5f * static_cast<float>(i);
  const std::vector<float> x = v;
  Sigmoid(v.data(), v.data(), v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    EXPECT_NEAR(v[i], DoubleReference(x[i]), 1e-6f) << "x[" << i << "] = " << x[i];
  }
}

TEST(SigmoidLayer, ForwardComputesEveryElementOfEveryItem) {
  SigmoidLayer layer;
  std::vector<sftensor> inputs = {Ramp(2, 3, 4, -6.f, 0.5f), Ramp(2, 3, 4, 1.f, -0.25f)};
  std::vector<sftensor> outputs(2);
  ASSERT_EQ(layer.Forward(inputs, outputs), InferStatus::kInferSuccess);
  for (size_t b = 0; b < inputs.size(); ++b) {
    ASSERT_NE(outputs[b], nullptr);
    ASSERT_EQ(outputs[b]->raw_shapes(), inputs[b]->raw_shapes());
    for (uint32_t c = 0; c < 2; ++c)
      for (uint32_t r = 0; r < 3; ++r)
        for (uint32_t col = 0; col < 4; ++col)
          EXPECT_NEAR(outputs[b]->at(c, r, col), Reference(inputs[b]->at(c, r, col)), 1e-6f);
  }
}

TEST(SigmoidLayer, ForwardKeepsOneAndTwoDimensionalShapes) {
  SigmoidLayer layer;
  sftensor vector = TensorCreate({5});
  vector->Fill({-2, -1, 0, 1, 2});
  sftensor matrix = TensorCreate({2, 3});
  matrix->Fill({-3, -2, -1, 1, 2, 3});
  std::vector<sftensor> outputs(1);
  ASSERT_EQ(layer.Forward({vector}, outputs), InferStatus::kInferSuccess);
  EXPECT_EQ(outputs[0]->raw_shapes(), std::vector<uint32_t>({5}));
  EXPECT_NEAR(outputs[0]->index(4), Reference(2.f), 1e-6f);
  ASSERT_EQ(layer.Forward({matrix}, outputs), InferStatus::kInferSuccess);
  EXPECT_EQ(outputs[0]->raw_shapes(), std::vector<uint32_t>({2, 3}));
  EXPECT_EQ(outputs[0]->values(true).size(), 6u);
  EXPECT_NEAR(outputs[0]->values(true)[5], Reference(3.f), 1e-6f);
}

TEST(SigmoidLayer, ForwardLeavesInputUnchanged) {
  SigmoidLayer layer;
  sftensor input = Ramp(1, 2, 2, -1.f, 1.f);
  const std::vector<float> before = input->values();
  std::vector<sftensor> outputs(1);
  ASSERT_EQ(layer.Forward({input}, outputs), InferStatus::kInferSuccess);
  EXPECT_EQ(input->values(), before);
  EXPECT_NE(outputs[0], input);
}

TEST(SigmoidLayer, ForwardWritesIntoAPreallocatedOutput) {
  SigmoidLayer layer;
  sftensor input = Ramp(1, 2, 2, 0.f, 1.f);
  sftensor slot = TensorCreate(1, 2, 2);
  std::vector<sftensor> outputs = {slot};
  ASSERT_EQ(layer.Forward({input}, outputs), InferStatus::kInferSuccess);
  EXPECT_NEAR(outputs[0]->at(0, 1, 1), Reference(3.f), 1e-6f);
}

TEST(SigmoidLayer, ForwardReplacesAnOutputOfTheWrongShape) {
  SigmoidLayer layer;
  sftensor input = Ramp(2, 2, 2, 0.f, 1.f);
  std::vector<sftensor> outputs = {TensorCreate(1, 1, 1)};
  ASSERT_EQ(layer.Forward({input}, outputs), InferStatus::kInferSuccess);
  EXPECT_EQ(outputs[0]->raw_shapes(), std::vector<uint32_t>({2, 2, 2}));
}

TEST(SigmoidLayer, EmptyInputBatchIsReported) {
  SigmoidLayer layer;
  std::vector<sftensor> outputs(1);
  EXPECT_EQ(layer.Forward({}, outputs), InferStatus::kInferFailedInputEmpty);
}

TEST(SigmoidLayer, NullOrEmptyInputTensorIsReported) {
  SigmoidLayer layer;
  std::vector<sftensor> outputs(2);
  EXPECT_EQ(layer.Forward({Ramp(1, 1, 2, 0, 1), nullptr}, outputs),
            InferStatus::kInferFailedInputEmpty);
  EXPECT_EQ(layer.Forward({Ramp(1, 1, 2, 0, 1), std::make_shared<ftensor>()}, outputs),
            InferStatus::kInferFailedInputEmpty);
}

TEST(SigmoidLayer, NoOutputSlotsIsReported) {
  SigmoidLayer layer;
  std::vector<sftensor> outputs;
  EXPECT_EQ(layer.Forward({Ramp(1, 1, 2, 0, 1)}, outputs), InferStatus::kInferFailedOutputEmpty);
}

TEST(SigmoidLayer, BatchSizeMismatchIsReported) {
  SigmoidLayer layer;
  std::vector<sftensor> outputs(3);
  EXPECT_EQ(layer.Forward({Ramp(1, 1, 2, 0, 1), Ramp(1, 1, 2, 0, 1)}, outputs),
            InferStatus::kInferFailedInputOutSizeMatchError);
}

TEST(SigmoidLayer, ChecksComeInTheOrderOfTheTable) {
  // Each call breaks two rules at once; the earlier row of the README's table wins.
  const char* why = "see README \"What Forward must check\": the first failing row of the table";
  SigmoidLayer layer;
  std::vector<sftensor> none;
  EXPECT_EQ(layer.Forward({}, none), InferStatus::kInferFailedInputEmpty) << why;
  EXPECT_EQ(layer.Forward({nullptr}, none), InferStatus::kInferFailedOutputEmpty) << why;
  std::vector<sftensor> three(3);
  EXPECT_EQ(layer.Forward({nullptr, Ramp(1, 1, 2, 0, 1)}, three),
            InferStatus::kInferFailedInputOutSizeMatchError)
      << why;
}

TEST(SigmoidLayer, FailedCheckLeavesOutputsAlone) {
  SigmoidLayer layer;
  sftensor slot = TensorCreate(1, 1, 2);
  slot->Fill(7.f);
  std::vector<sftensor> outputs = {slot, nullptr};
  EXPECT_EQ(layer.Forward({Ramp(1, 1, 2, 0, 1), nullptr}, outputs),
            InferStatus::kInferFailedInputEmpty);
  EXPECT_EQ(outputs[0], slot);
  EXPECT_EQ(slot->values(), std::vector<float>({7.f, 7.f}));
}

TEST(SigmoidLayer, FailedCheckLeavesAWrongShapedOutputSlotInPlace) {
  // Item 0's slot has another shape than its input, so EnsureOutput would
  // replace it: a call that fails on item 1 must not have reached item 0.
  SigmoidLayer layer;
  sftensor slot = TensorCreate(1, 1, 3);
  slot->Fill(7.f);
  std::vector<sftensor> outputs = {slot, nullptr};
  EXPECT_EQ(layer.Forward({Ramp(1, 1, 2, 0, 1), nullptr}, outputs),
            InferStatus::kInferFailedInputEmpty);
  EXPECT_EQ(outputs[0], slot)
      << "a failed call replaced an output slot; see README \"What Forward must check\" "
         "(check everything first)";
  EXPECT_EQ(slot->values(), std::vector<float>({7.f, 7.f, 7.f}));
}

TEST(SigmoidRegistration, BothTypeNamesAreRegistered) {
  for (const char* type : {"nn.Sigmoid", "F.sigmoid"}) {
    EXPECT_TRUE(LayerRegisterer::HasCreator(type))
        << "no creator is registered for " << type
        << ": see README \"The registry\" (the registration is yours to write)";
  }
}

TEST(SigmoidRegistration, RegistryCreatesAWorkingSigmoidLayer) {
  for (const std::string type : {"nn.Sigmoid", "F.sigmoid"}) {
    RuntimeOperator op;
    op.type = type;
    op.name = "sigmoid";
    ASSERT_TRUE(LayerRegisterer::HasCreator(type))
        << "no creator is registered for " << type << ": see README \"The registry\"";
    std::unique_ptr<Layer> layer = LayerRegisterer::CreateLayer(op);
    ASSERT_NE(layer, nullptr) << type;
    EXPECT_NE(dynamic_cast<SigmoidLayer*>(layer.get()), nullptr) << type;
    std::vector<sftensor> outputs(1);
    ASSERT_EQ(layer->Forward({Ramp(1, 1, 1, 0, 0)}, outputs), InferStatus::kInferSuccess);
    EXPECT_FLOAT_EQ(outputs[0]->index(0), 0.5f);
  }
}

}  // namespace
}  // namespace kuiper
