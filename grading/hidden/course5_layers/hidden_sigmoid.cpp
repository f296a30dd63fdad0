// course5_layers hidden tests: the sigmoid's far negative tail, output slots
// (reused, reshaped, untouched after a failed check) and items of 4 and 5
// dimensions, as the YOLOv5 head's F.sigmoid gets them. References: the
// logistic function in double, rounded once to float.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "kuiper/layer.hpp"
#include "kuiper/layers/sigmoid.hpp"

namespace kuiper {
namespace {

float HiddenReference(float x) { return float(1.0 / (1.0 + std::exp(-double(x)))); }

sftensor HiddenRamp(const std::vector<uint32_t>& shapes, float start, float step) {
  sftensor t = TensorCreate(shapes);
  for (uint32_t i = 0; i < t->size(); ++i) t->index(i) = start + step * static_cast<float>(i);
  return t;
}

TEST(HiddenSigmoid, FarNegativeTailKeepsItsRelativeAccuracy) {
  // sigmoid(-30) = 9.4e-14 and sigmoid(-80) = 1.8e-35 are ordinary floats:
  // an absolute error of 1e-6 would pass them as 0, a relative one does not.
  // Three rounds of the seven values in one span (vector lanes), then each
  // value alone (a span of 1: the loop's tail).
  const std::vector<float> tail = {-17.f, -20.5f, -25.f, -30.f, -50.f, -80.f, -87.f};
  std::vector<float> x;
  for (int round = 0; round < 3; ++round) x.insert(x.end(), tail.begin(), tail.end());
  std::vector<float> y(x.size());
  Sigmoid(x.data(), y.data(), x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_FLOAT_EQ(y[i], HiddenReference(x[i]))
        << "x = " << x[i] << "; see README \"The sigmoid and its ends\"";
  }
  for (float v : tail) {
    float alone = 0.f;
    Sigmoid(&v, &alone, 1);
    EXPECT_FLOAT_EQ(alone, HiddenReference(v))
        << "x = " << v << " alone; see README \"The sigmoid and its ends\"";
  }
}

TEST(HiddenSigmoidLayer, ForwardReusesAnOutputSlotOfTheRightShape) {
  // The graph keeps its output tensors from run to run: the layer writes into
  // the slot it is given instead of allocating a new one.
  SigmoidLayer layer;
  sftensor slot = TensorCreate(2, 3, 4);
  std::vector<sftensor> outputs = {slot};
  ASSERT_EQ(layer.Forward({HiddenRamp({2, 3, 4}, -3.f, 0.25f)}, outputs),
            InferStatus::kInferSuccess);
  EXPECT_EQ(outputs[0], slot) << "the slot had the input's shape; see README \"Computing a "
                                 "batch\" (EnsureOutput keeps it)";
  EXPECT_FLOAT_EQ(slot->index(23), HiddenReference(-3.f + 0.25f * 23));
}

TEST(HiddenSigmoidLayer, SlotWithTheSameSizeButAnotherShapeIsReplaced) {
  // 6 elements in both, but a (6) or (3, 2) slot is not a (2, 3) output.
  SigmoidLayer layer;
  for (const std::vector<uint32_t>& slot_shape :
       std::vector<std::vector<uint32_t>>{{6}, {3, 2}, {1, 2, 3}}) {
    std::vector<sftensor> outputs = {TensorCreate(slot_shape)};
    ASSERT_EQ(layer.Forward({HiddenRamp({2, 3}, -1.f, 0.5f)}, outputs), InferStatus::kInferSuccess);
    EXPECT_EQ(outputs[0]->raw_shapes(), std::vector<uint32_t>({2, 3}))
        << "slot of " << slot_shape.size() << " dimensions; outputs[i] gets the raw_shapes of "
        << "inputs[i]; see README \"Computing a batch\"";
  }
}

TEST(HiddenSigmoidLayer, FourAndFiveDimensionalItemsKeepTheirShape) {
  // The YOLOv5 head applies F.sigmoid to (1, 3, h, w, 85) operands: items of
  // 4 dimensions. Every element of every item is computed, in storage order.
  SigmoidLayer layer;
  std::vector<sftensor> inputs = {HiddenRamp({3, 2, 2, 5}, -6.f, 0.1f),
                                  HiddenRamp({2, 1, 3, 2, 2}, 4.f, -0.2f)};
  std::vector<sftensor> outputs(2);
  ASSERT_EQ(layer.Forward(inputs, outputs), InferStatus::kInferSuccess);
  for (size_t b = 0; b < inputs.size(); ++b) {
    ASSERT_NE(outputs[b], nullptr);
    ASSERT_EQ(outputs[b]->raw_shapes(), inputs[b]->raw_shapes()) << "item " << b;
    ASSERT_EQ(outputs[b]->size(), inputs[b]->size()) << "item " << b;
    for (uint32_t i = 0; i < inputs[b]->size(); ++i) {
      EXPECT_FLOAT_EQ(outputs[b]->index(i), HiddenReference(inputs[b]->index(i)))
          << "item " << b << ", element " << i;
    }
  }
}

TEST(HiddenSigmoidLayer, FailedCheckCreatesNoOutput) {
  // The second input is null: the status comes before any slot is filled,
  // so the empty slots stay empty and the wrong-shaped one stays as it was.
  SigmoidLayer layer;
  sftensor wrong_shape = TensorCreate(1, 1, 1);
  std::vector<sftensor> outputs = {nullptr, wrong_shape, nullptr};
  EXPECT_EQ(
      layer.Forward({HiddenRamp({1, 1, 2}, 0, 1), HiddenRamp({2, 2}, 0, 1), nullptr}, outputs),
      InferStatus::kInferFailedInputEmpty);
  EXPECT_EQ(outputs[0], nullptr) << "see README \"What Forward must check\"";
  EXPECT_EQ(outputs[1], wrong_shape) << "see README \"What Forward must check\"";
  EXPECT_EQ(outputs[2], nullptr) << "see README \"What Forward must check\"";
}

}  // namespace
}  // namespace kuiper
