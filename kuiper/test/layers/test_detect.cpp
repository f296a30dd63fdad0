// models.yolo.Detect, the YOLOv5 head: hand-computed cells and the checks.
// (The PyTorch comparison is tiny_detect in test_light_fixtures.cpp.)
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "kuiper/layer.hpp"

namespace kuiper {
namespace {

RuntimeAttribute Attr(const std::vector<int>& shape, const std::vector<float>& values) {
  RuntimeAttribute attr;
  attr.type = pnnx::DataType::kF32;
  attr.shape = shape;
  attr.data.resize(values.size() * sizeof(float));
  std::memcpy(attr.data.data(), values.data(), attr.data.size());
  return attr;
}

// One level with C input channels, nc=1 (no = 6), na anchors; weights and
// biases given per output channel a * 6 + k.
RuntimeOperator DetectOp(int na, int channels, const std::vector<float>& weight,
                         const std::vector<float>& bias, const std::vector<float>& anchors,
                         float stride) {
  RuntimeOperator op;
  op.type = "models.yolo.Detect";
  op.name = "detect";
  op.params["nc"] = 1;
  op.params["na"] = na;
  op.attribute["m.0.weight"] = Attr({na * 6, channels, 1, 1}, weight);
  op.attribute["m.0.bias"] = Attr({na * 6}, bias);
  op.attribute["anchors"] = Attr({1, na, 2}, anchors);
  op.attribute["strides"] = Attr({1}, {stride});
  return op;
}

const float kLogit075 = std::log(3.f);  // sigmoid(ln 3) = 0.75

TEST(Detect, OneCellDecodesBoxAndScores) {
  // Zero weights: every value is sigmoid(bias). Biases 0 give 0.5, ln 3 gives 0.75.
  RuntimeOperator op = DetectOp(1, 1, std::vector<float>(6, 0.f),
                                {kLogit075, 0, kLogit075, 0, 0, kLogit075}, {10, 13}, 8);
  auto layer = LayerRegisterer::CreateLayer(op);
  sftensor x = TensorCreate(1, 1, 1);
  std::vector<sftensor> outputs(1);
  ASSERT_EQ(layer->Forward({x}, outputs), InferStatus::kInferSuccess);
  ASSERT_EQ(outputs[0]->raw_shapes(), std::vector<uint32_t>({1, 6}));
  // x: (0.75*2 - 0.5 + 0) * 8 = 8;  y: (0.5*2 - 0.5 + 0) * 8 = 4
  // w: (0.75*2)^2 * 10 = 22.5;      h: (0.5*2)^2 * 13 = 13
  const std::vector<float> expected = {8, 4, 22.5f, 13, 0.5f, 0.75f};
  for (uint32_t k = 0; k < 6; ++k) EXPECT_NEAR(outputs[0]->at(0, 0, k), expected[k], 1e-5f) << k;
}

TEST(Detect, RowsGoAnchorThenYThenXWithGridOffsets) {
  // 2 anchors on a 2 x 3 grid: 12 rows. All sigmoids 0.5, so x = (0.5 + cx) * 16,
  // y = (0.5 + cy) * 16, w and h the anchor.
  RuntimeOperator op = DetectOp(2, 1, std::vector<float>(12, 0.f), std::vector<float>(12, 0.f),
                                {10, 13, 30, 61}, 16);
  auto layer = LayerRegisterer::CreateLayer(op);
  std::vector<sftensor> outputs(1);
  ASSERT_EQ(layer->Forward({TensorCreate(1, 2, 3)}, outputs), InferStatus::kInferSuccess);
  ASSERT_EQ(outputs[0]->raw_shapes(), std::vector<uint32_t>({12, 6}));
  uint32_t row = 0;
  for (uint32_t a = 0; a < 2; ++a) {
    for (uint32_t cy = 0; cy < 2; ++cy) {
      for (uint32_t cx = 0; cx < 3; ++cx, ++row) {
        EXPECT_FLOAT_EQ(outputs[0]->at(0, row, 0), (0.5f + cx) * 16) << row;
        EXPECT_FLOAT_EQ(outputs[0]->at(0, row, 1), (0.5f + cy) * 16) << row;
        EXPECT_FLOAT_EQ(outputs[0]->at(0, row, 2), a == 0 ? 10.f : 30.f) << row;
        EXPECT_FLOAT_EQ(outputs[0]->at(0, row, 3), a == 0 ? 13.f : 61.f) << row;
      }
    }
  }
}

TEST(Detect, ConvolutionMixesChannelsPerCell) {
  // Channel k of the conv = 2 * in0 - in1 + bias for every k; input cells
  // differ, so each row shows its own cell's value.
  std::vector<float> weight;
  for (int k = 0; k < 6; ++k) weight.insert(weight.end(), {2.f, -1.f});
  RuntimeOperator op = DetectOp(1, 2, weight, std::vector<float>(6, 0.5f), {4, 4}, 1);
  auto layer = LayerRegisterer::CreateLayer(op);
  sftensor x = TensorCreate(2, 1, 2);
  x->Fill({0.25f, -1.f, 1.f, 0.5f}, /*row_major=*/true);  // in0 = (0.25, -1), in1 = (1, 0.5)
  std::vector<sftensor> outputs(1);
  ASSERT_EQ(layer->Forward({x}, outputs), InferStatus::kInferSuccess);
  const float p0 = 2 * 0.25f - 1.f + 0.5f, p1 = 2 * -1.f - 0.5f + 0.5f;
  EXPECT_NEAR(outputs[0]->at(0, 0, 4), 1 / (1 + std::exp(-p0)), 1e-6f);
  EXPECT_NEAR(outputs[0]->at(0, 1, 4), 1 / (1 + std::exp(-p1)), 1e-6f);
}

TEST(Detect, ThreeLevelsAreStackedInOrder) {
  RuntimeOperator op;
  op.type = "models.yolo.Detect";
  op.name = "detect";
  op.params["nc"] = 1;
  op.params["na"] = 1;
  for (int l = 0; l < 3; ++l) {
    op.attribute["m." + std::to_string(l) + ".weight"] =
        Attr({6, l + 1, 1, 1}, std::vector<float>(6 * (l + 1)));
    op.attribute["m." + std::to_string(l) + ".bias"] = Attr({6}, std::vector<float>(6));
  }
  op.attribute["anchors"] = Attr({3, 1, 2}, {1, 1, 2, 2, 3, 3});
  op.attribute["strides"] = Attr({3}, {8, 16, 32});
  auto layer = LayerRegisterer::CreateLayer(op);
  // Batch 2: inputs are {L0 item0, L0 item1, L1 ..., L2 ...}.
  std::vector<sftensor> inputs = {TensorCreate(1, 2, 2), TensorCreate(1, 2, 2),
                                  TensorCreate(2, 1, 1), TensorCreate(2, 1, 1),
                                  TensorCreate(3, 1, 1), TensorCreate(3, 1, 1)};
  std::vector<sftensor> outputs(2);
  ASSERT_EQ(layer->Forward(inputs, outputs), InferStatus::kInferSuccess);
  for (const sftensor& out : outputs) {
    ASSERT_EQ(out->raw_shapes(), std::vector<uint32_t>({6, 6}));
    EXPECT_FLOAT_EQ(out->at(0, 3, 0), 1.5f * 8);   // level 0, cell (1, 1)
    EXPECT_FLOAT_EQ(out->at(0, 4, 0), 0.5f * 16);  // level 1
    EXPECT_FLOAT_EQ(out->at(0, 4, 2), 2.f);
    EXPECT_FLOAT_EQ(out->at(0, 5, 0), 0.5f * 32);  // level 2
    EXPECT_FLOAT_EQ(out->at(0, 5, 3), 3.f);
  }
}

TEST(Detect, WrongChannelCountIsReported) {
  auto layer = LayerRegisterer::CreateLayer(
      DetectOp(1, 2, std::vector<float>(12), std::vector<float>(6), {1, 1}, 8));
  std::vector<sftensor> outputs(1);
  EXPECT_EQ(layer->Forward({TensorCreate(3, 2, 2)}, outputs),
            InferStatus::kInferFailedChannelParameterError);
}

TEST(Detect, InputChecksAreReported) {
  auto layer = LayerRegisterer::CreateLayer(
      DetectOp(1, 1, std::vector<float>(6), std::vector<float>(6), {1, 1}, 8));
  std::vector<sftensor> outputs(1), none, two(2);
  EXPECT_EQ(layer->Forward({}, outputs), InferStatus::kInferFailedInputEmpty);
  EXPECT_EQ(layer->Forward({nullptr}, outputs), InferStatus::kInferFailedInputEmpty);
  EXPECT_EQ(layer->Forward({TensorCreate(1, 1, 1)}, none), InferStatus::kInferFailedOutputEmpty);
  EXPECT_EQ(layer->Forward({TensorCreate(1, 1, 1)}, two),
            InferStatus::kInferFailedInputOutSizeMatchError);
  EXPECT_EQ(layer->Forward({TensorCreate({1, 1})}, outputs), InferStatus::kInferFailedShapeError);
}

TEST(Detect, WeightsThatDoNotFitAreRejectedAtCreation) {
  // A weight of 5 values for shape (6, 1, 1, 1).
  EXPECT_THROW(LayerRegisterer::CreateLayer(
                   DetectOp(1, 1, std::vector<float>(5), std::vector<float>(6), {1, 1}, 8)),
               LayerError);
  RuntimeOperator op = DetectOp(1, 1, std::vector<float>(6), std::vector<float>(6), {1, 1}, 8);
  op.attribute["anchors"] = Attr({1, 2, 2}, {1, 1, 2, 2});  // na is 1
  EXPECT_THROW(LayerRegisterer::CreateLayer(op), LayerError);
  op = DetectOp(1, 1, std::vector<float>(6), std::vector<float>(6), {1, 1}, 8);
  op.attribute.erase("m.0.bias");
  EXPECT_THROW(LayerRegisterer::CreateLayer(op), LayerError);
  op = DetectOp(1, 1, std::vector<float>(6), std::vector<float>(6), {1, 1}, 8);
  op.params["nc"] = 0;
  EXPECT_THROW(LayerRegisterer::CreateLayer(op), LayerError);
}

// pnnx's moduleop form of the same one-level head: no params, the captured
// grid (1,na,H,W,2) of cell (x, y) - 0.5, strides (1) and anchor grid
// (1,na,H,W,2), named in use order. The layer tells them apart by content.
RuntimeOperator ModuleOpDetectOp(const RuntimeOperator& ours, int na, int h, int w) {
  RuntimeOperator op;
  op.type = ours.type;
  op.name = ours.name;
  op.attribute["m.0.weight"] = ours.attribute.at("m.0.weight");
  op.attribute["m.0.bias"] = ours.attribute.at("m.0.bias");
  const std::vector<float> anchors = ours.attribute.at("anchors").ToFloat();
  std::vector<float> grid, anchor_grid;
  for (int a = 0; a < na; ++a) {
    for (int y = 0; y < h; ++y) {
      for (int x = 0; x < w; ++x) {
        grid.insert(grid.end(), {x - 0.5f, y - 0.5f});
        anchor_grid.insert(anchor_grid.end(), {anchors[2 * a], anchors[2 * a + 1]});
      }
    }
  }
  op.attribute["pnnx_00"] = Attr({1, na, h, w, 2}, grid);
  op.attribute["pnnx_01"] = ours.attribute.at("strides");
  op.attribute["pnnx_02"] = Attr({1, na, h, w, 2}, anchor_grid);
  return op;
}

std::vector<float> RunDetect(const RuntimeOperator& op, int channels, int h, int w) {
  auto layer = LayerRegisterer::CreateLayer(op);
  sftensor x = TensorCreate(channels, h, w);
  for (uint32_t i = 0; i < x->size(); ++i) x->raw_ptr()[i] = 0.1f * static_cast<float>(i % 7);
  std::vector<sftensor> outputs(1);
  EXPECT_EQ(layer->Forward({x}, outputs), InferStatus::kInferSuccess);
  return outputs[0]->values(true);
}

TEST(Detect, PnnxModuleOpFormDecodesLikeOurs) {
  // 2 anchors, 1 channel, a 2 x 3 grid; weights and biases vary per output.
  std::vector<float> weight(12), bias(12);
  for (int k = 0; k < 12; ++k) weight[k] = 0.25f * (k % 5) - 0.5f, bias[k] = 0.1f * k - 0.6f;
  const RuntimeOperator ours = DetectOp(2, 1, weight, bias, {10, 13, 30, 61}, 16);
  EXPECT_EQ(RunDetect(ModuleOpDetectOp(ours, 2, 2, 3), 1, 2, 3), RunDetect(ours, 1, 2, 3));
}

TEST(Detect, PnnxModuleOpGridWithoutTheHalfCellShiftIsAcceptedToo) {
  // Ultralytics before v6.1 kept the grid at (x, y) and subtracted 0.5 in forward.
  const RuntimeOperator ours =
      DetectOp(1, 1, std::vector<float>(6, 0.f), std::vector<float>(6, 0.f), {10, 13}, 8);
  RuntimeOperator op = ModuleOpDetectOp(ours, 1, 1, 2);
  op.attribute["pnnx_00"] = Attr({1, 1, 1, 2, 2}, {0, 0, 1, 0});
  EXPECT_EQ(RunDetect(op, 1, 1, 2), RunDetect(ours, 1, 1, 2));
}

TEST(Detect, PnnxModuleOpConstantOfAnotherKindIsRejectedNamingIt) {
  const RuntimeOperator ours =
      DetectOp(1, 1, std::vector<float>(6, 0.f), std::vector<float>(6, 0.f), {10, 13}, 8);
  RuntimeOperator op = ModuleOpDetectOp(ours, 1, 1, 2);
  op.attribute["pnnx_00"] = Attr({1, 1, 1, 2, 2}, {0, 0, 2, 0});  // cell x=1 holds 2
  try {
    LayerRegisterer::CreateLayer(op);
    FAIL() << "no error";
  } catch (const LayerError& e) {
    EXPECT_NE(std::string(e.what()).find("operator 'detect'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("pnnx_00"), std::string::npos) << e.what();
  }
}

// The real pnnx converting our own Detect with moduleop=models.yolo.Detect
// keeps the module's weights and buffers (anchors, strides) but writes no
// params: nc and na come from the shapes of anchors and m.0.weight.
TEST(Detect, OurFormWithoutParamsTakesNcAndNaFromTheShapes) {
  std::vector<float> weight(12), bias(12);
  for (int k = 0; k < 12; ++k) weight[k] = 0.25f * (k % 5) - 0.5f, bias[k] = 0.1f * k - 0.6f;
  const RuntimeOperator ours = DetectOp(2, 1, weight, bias, {10, 13, 30, 61}, 16);
  RuntimeOperator op = DetectOp(2, 1, weight, bias, {10, 13, 30, 61}, 16);
  op.params.clear();
  op.attribute["anchors"] = Attr({1, 2, 2}, {10, 13, 30, 61});  // (levels, na, 2)
  EXPECT_EQ(RunDetect(op, 1, 2, 3), RunDetect(ours, 1, 2, 3));
}

// Ultralytics' Detect has an `anchors` buffer too (in grid units, not pixels);
// with moduleop pnnx writes it beside the numbered constants, which decide.
TEST(Detect, NumberedConstantsWinOverAnAnchorsBufferInGridUnits) {
  std::vector<float> weight(12), bias(12);
  for (int k = 0; k < 12; ++k) weight[k] = 0.25f * (k % 5) - 0.5f, bias[k] = 0.1f * k - 0.6f;
  const RuntimeOperator ours = DetectOp(2, 1, weight, bias, {10, 13, 30, 61}, 16);
  RuntimeOperator op = ModuleOpDetectOp(ours, 2, 2, 3);
  op.attribute["anchors"] = Attr({1, 2, 2}, {10.f / 16, 13.f / 16, 30.f / 16, 61.f / 16});
  EXPECT_EQ(RunDetect(op, 1, 2, 3), RunDetect(ours, 1, 2, 3));
}

}  // namespace
}  // namespace kuiper
