// Post-processing on hand-computed cases: softmax/top-k for classification,
// YOLO decoding, per-class NMS and undoing the letterbox for detection, and
// the statistics the CLI reports.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "kuiper/error.hpp"
#include "kuiper/npy.hpp"
#include "metrics.hpp"
#include "postprocess.hpp"

namespace kuiper::app {
namespace {

TEST(Softmax, MatchesHandComputedProbabilities) {
  const std::vector<float> p = Softmax({0.f, std::log(3.f)});
  ASSERT_EQ(p.size(), 2u);
  EXPECT_NEAR(p[0], 0.25f, 1e-6);
  EXPECT_NEAR(p[1], 0.75f, 1e-6);
}

TEST(Softmax, HugeLogitsDoNotOverflow) {
  const std::vector<float> p = Softmax({1000.f, 1000.f, -1000.f});
  EXPECT_NEAR(p[0], 0.5f, 1e-6);
  EXPECT_NEAR(p[1], 0.5f, 1e-6);
  EXPECT_EQ(p[2], 0.f);
}

TEST(TopK, ReturnsLargestFirstAndKeepsIndexOrderForTies) {
  const std::vector<Ranked> top = TopK({0.1f, 0.5f, 0.2f, 0.5f, 0.9f}, 3);
  ASSERT_EQ(top.size(), 3u);
  EXPECT_EQ(top[0].index, 4);
  EXPECT_EQ(top[1].index, 1);
  EXPECT_EQ(top[2].index, 3);
  EXPECT_FLOAT_EQ(top[2].value, 0.5f);
}

TEST(TopK, KLargerThanInputReturnsEverything) { EXPECT_EQ(TopK({1.f, 2.f}, 5).size(), 2u); }

TEST(IoU, NestedBoxesGiveAreaRatio) { EXPECT_FLOAT_EQ(IoU({0, 0, 10, 10}, {0, 0, 8, 8}), 0.64f); }

TEST(IoU, DisjointOrEmptyBoxesGiveZero) {
  EXPECT_EQ(IoU({0, 0, 10, 10}, {20, 20, 30, 30}), 0.f);
  EXPECT_EQ(IoU({5, 5, 5, 5}, {5, 5, 5, 5}), 0.f);
}

TEST(Nms, OverlapAboveThresholdIsSuppressed) {
  // IoU 0.64 > 0.45: the lower score goes.
  const std::vector<Detection> kept =
      Nms({{{0, 0, 8, 8}, 3, 0.8f}, {{0, 0, 10, 10}, 3, 0.9f}}, 0.45f);
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_FLOAT_EQ(kept[0].score, 0.9f);
}

TEST(Nms, OverlapBelowThresholdIsKeptSortedByScore) {
  // IoU 0.64 <= 0.7: both stay, best first.
  const std::vector<Detection> kept =
      Nms({{{0, 0, 8, 8}, 3, 0.8f}, {{0, 0, 10, 10}, 3, 0.9f}}, 0.7f);
  ASSERT_EQ(kept.size(), 2u);
  EXPECT_FLOAT_EQ(kept[0].score, 0.9f);
  EXPECT_FLOAT_EQ(kept[1].score, 0.8f);
}

TEST(Nms, DifferentClassesNeverSuppressEachOther) {
  const std::vector<Detection> kept =
      Nms({{{0, 0, 10, 10}, 0, 0.9f}, {{0, 0, 10, 10}, 1, 0.8f}}, 0.45f);
  EXPECT_EQ(kept.size(), 2u);
}

TEST(Nms, ASuppressedBoxSuppressesNothing) {
  // B overlaps A and C by IoU 70/130 = 0.54, A and C only by 40/160 = 0.25:
  // A removes B, so C survives although B would have removed it.
  const Detection a{{0, 0, 10, 10}, 0, 0.9f};
  const Detection b{{3, 0, 13, 10}, 0, 0.8f};
  const Detection c{{6, 0, 16, 10}, 0, 0.7f};
  ASSERT_GT(IoU(a.box, b.box), 0.45f);
  ASSERT_GT(IoU(b.box, c.box), 0.45f);
  ASSERT_LE(IoU(a.box, c.box), 0.45f);
  const std::vector<Detection> kept = Nms({c, b, a}, 0.45f);
  ASSERT_EQ(kept.size(), 2u);
  EXPECT_FLOAT_EQ(kept[0].score, 0.9f);
  EXPECT_FLOAT_EQ(kept[1].score, 0.7f);
}

TEST(Nms, KeepsWhatTorchvisionsBatchedNmsKeeps) {
  // 300 crowded boxes of 3 classes and torchvision's choice (make_nms_ref.py).
  const std::string data = std::string(KUIPER_SOURCE_DIR) + "/final_project/test/data/";
  const NpyArray boxes = LoadNpy(data + "nms_boxes.npy");
  const NpyArray keep = LoadNpy(data + "nms_keep.npy");
  ASSERT_EQ(boxes.shape, (std::vector<int64_t>{300, 6}));
  std::vector<Detection> all;
  for (size_t i = 0; i < 300; ++i) {
    const float* b = &boxes.data[i * 6];
    all.push_back({{b[0], b[1], b[2], b[3]}, static_cast<int>(b[5]), b[4]});
  }
  const std::vector<Detection> kept = Nms(all, 0.45f);
  ASSERT_EQ(kept.size(), keep.data.size());
  for (size_t k = 0; k < kept.size(); ++k) {
    // Scores are distinct, so the score identifies the box.
    EXPECT_EQ(kept[k].score, all[static_cast<size_t>(keep.data[k])].score) << "rank " << k;
  }
}

TEST(DecodeYolo, ScoreIsObjectnessTimesBestClassAboveConf) {
  // Rows: cx, cy, w, h, objectness, class 0, class 1.
  const std::vector<float> rows = {
      100, 50, 20, 10, 0.5f, 0.2f, 0.9f,  // 0.45, class 1: kept
      10,  10, 4,  4,  0.3f, 0.9f, 0.1f,  // 0.27, class 0: kept
      10,  10, 4,  4,  0.9f, 0.2f, 0.2f,  // 0.18: below 0.25
      10,  10, 4,  4,  0.2f, 1.0f, 1.0f,  // objectness 0.2 cannot reach 0.25
  };
  const std::vector<Detection> d = DecodeYolo(rows, 7, 0.25f);
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].class_id, 1);
  EXPECT_FLOAT_EQ(d[0].score, 0.45f);
  EXPECT_FLOAT_EQ(d[0].box.x1, 90);
  EXPECT_FLOAT_EQ(d[0].box.y1, 45);
  EXPECT_FLOAT_EQ(d[0].box.x2, 110);
  EXPECT_FLOAT_EQ(d[0].box.y2, 55);
  EXPECT_EQ(d[1].class_id, 0);
  EXPECT_FLOAT_EQ(d[1].score, 0.27f);
}

TEST(DecodeYolo, PartialRowThrowsShapeError) {
  EXPECT_THROW(DecodeYolo(std::vector<float>(13), 7, 0.25f), ShapeError);
}

TEST(UnLetterbox, UndoesPadAndScaleOf1280x720) {
  // Letterbox of 1280x720 into 640: scale 0.5, pad top 140.
  const Box b = UnLetterbox({100, 140, 300, 500}, 0.5f, 0, 140, 1280, 720);
  EXPECT_FLOAT_EQ(b.x1, 200);
  EXPECT_FLOAT_EQ(b.y1, 0);
  EXPECT_FLOAT_EQ(b.x2, 600);
  EXPECT_FLOAT_EQ(b.y2, 720);
}

TEST(UnLetterbox, ClipsToTheImage) {
  const Box b = UnLetterbox({-10, 100, 700, 600}, 0.5f, 0, 140, 1280, 720);
  EXPECT_FLOAT_EQ(b.x1, 0);
  EXPECT_FLOAT_EQ(b.y1, 0);
  EXPECT_FLOAT_EQ(b.x2, 1280);
  EXPECT_FLOAT_EQ(b.y2, 720);
}

TEST(LabelOf, FallsBackToTheNumber) {
  EXPECT_EQ(LabelOf({"cat", "dog"}, 1), "dog");
  EXPECT_EQ(LabelOf({"cat", "dog"}, 7), "class 7");
}

TEST(Quantile, MedianAndP90InterpolateLikeNumPy) {
  EXPECT_DOUBLE_EQ(Quantile({3, 1, 2}, 0.5), 2);
  EXPECT_DOUBLE_EQ(Quantile({4, 1, 3, 2}, 0.5), 2.5);
  EXPECT_NEAR(Quantile({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 0.9), 9.1, 1e-12);
}

TEST(Quantile, EmptyThrows) { EXPECT_THROW(Quantile({}, 0.5), Error); }

TEST(MaxAbsDiff, IsTheLargestElementwiseDifference) {
  EXPECT_FLOAT_EQ(MaxAbsDiff({1, 2, 3}, {1, 2.5f, 2}), 1.f);
  EXPECT_FLOAT_EQ(MaxAbs({1, -4, 3}), 4.f);
}

TEST(MaxAbsDiff, NanNeverPasses) {
  EXPECT_TRUE(std::isnan(MaxAbsDiff({1, std::numeric_limits<float>::quiet_NaN()}, {1, 2})));
}

TEST(MaxAbsDiff, SizeMismatchThrowsShapeError) {
  EXPECT_THROW(MaxAbsDiff({1, 2}, {1}), ShapeError);
}

}  // namespace
}  // namespace kuiper::app
