// course8_capstone, part 2: IoU, DecodeYolo, Nms and UnLetterbox (kuiper/vision.hpp).
// Expected values are worked out by hand in the comments, or come from torchvision
// (tools/capstone_nms_ref.py, final_project/test/data/make_nms_ref.py).
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <string>

#include "kuiper/error.hpp"
#include "kuiper/npy.hpp"
#include "kuiper/vision.hpp"

namespace kuiper {
namespace {

Detection Det(float x1, float y1, float x2, float y2, float score, int class_id) {
  return {{x1, y1, x2, y2}, class_id, score};
}

// ---- IoU ----

TEST(IoU, NestedBoxesGiveTheAreaRatio) {
  // 8x8 inside 10x10: 64 / 100.
  EXPECT_FLOAT_EQ(IoU({0, 0, 10, 10}, {0, 0, 8, 8}), 0.64f);
}

TEST(IoU, PartlyOverlappingBoxesByHand) {
  // README's worked example: two 4x4 boxes share a 2x2 corner: 4 / (16 + 16 - 4) = 1/7.
  // With the "+1" pixel convention it would be 9 / 41.
  EXPECT_FLOAT_EQ(IoU({0, 0, 4, 4}, {2, 2, 6, 6}), 1.f / 7.f);
}

TEST(IoU, BoxesThatOnlyTouchGiveZero) {
  // They share the edge x = 10, which has no area.
  EXPECT_EQ(IoU({0, 0, 10, 10}, {10, 0, 20, 10}), 0.f);
}

TEST(IoU, DisjointBoxesGiveZero) { EXPECT_EQ(IoU({0, 0, 1, 1}, {5, 5, 6, 6}), 0.f); }

TEST(IoU, BoxesWithoutAreaGiveZeroNotNan) {
  EXPECT_EQ(IoU({3, 3, 3, 3}, {3, 3, 3, 3}), 0.f);
  EXPECT_EQ(IoU({5, 5, 1, 1}, {0, 0, 10, 10}), 0.f);  // x2 < x1: no area
}

// ---- DecodeYolo ----

TEST(DecodeYolo, ScoreIsObjectnessTimesTheBestClassScore) {
  // cx, cy, w, h, objectness, class 0, class 1: 0.5 * 0.9 = 0.45 for class 1.
  const std::vector<Detection> d = DecodeYolo({100, 50, 20, 10, 0.5f, 0.2f, 0.9f}, 7, 0.25f);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].class_id, 1);
  EXPECT_FLOAT_EQ(d[0].score, 0.5f * 0.9f);
}

TEST(DecodeYolo, CentreAndSizeBecomeCorners) {
  // Centre (100, 50), 20 wide, 10 high: x from 90 to 110, y from 45 to 55.
  const std::vector<Detection> d = DecodeYolo({100, 50, 20, 10, 1, 1}, 6, 0.25f);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_FLOAT_EQ(d[0].box.x1, 90);
  EXPECT_FLOAT_EQ(d[0].box.y1, 45);
  EXPECT_FLOAT_EQ(d[0].box.x2, 110);
  EXPECT_FLOAT_EQ(d[0].box.y2, 55);
}

TEST(DecodeYolo, LowScoresAreDroppedEvenWithHighObjectness) {
  // 0.9 * 0.2 = 0.18 and 0.2 * 0.9 = 0.18: both below 0.25.
  EXPECT_TRUE(DecodeYolo({10, 10, 4, 4, 0.9f, 0.2f, 0.1f,  //
                          10, 10, 4, 4, 0.2f, 0.1f, 0.9f},
                         7, 0.25f)
                  .empty());
}

TEST(DecodeYolo, ScoreEqualToTheThresholdIsDropped) {
  // 0.5 * 0.5 = 0.25 exactly in float: YOLOv5 keeps conf > conf_thres, so not this one.
  EXPECT_TRUE(DecodeYolo({10, 10, 4, 4, 0.5f, 0.5f}, 6, 0.25f).empty());
  EXPECT_EQ(DecodeYolo({10, 10, 4, 4, 0.5f, 0.5f}, 6, 0.24f).size(), 1u);
}

TEST(DecodeYolo, ClassIdCountsFromTheFirstClassScore) {
  // Three classes; the third (id 2) is best.
  const std::vector<Detection> d = DecodeYolo({1, 1, 1, 1, 1, 0.1f, 0.2f, 0.8f}, 8, 0.25f);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].class_id, 2);
}

TEST(DecodeYolo, KeptRowsKeepTheirOrder) {
  const std::vector<Detection> d = DecodeYolo({1, 1, 2, 2, 0.4f, 1,  //
                                               5, 5, 2, 2, 0.1f, 1,  //
                                               9, 9, 2, 2, 0.8f, 1},
                                              6, 0.25f);
  ASSERT_EQ(d.size(), 2u);
  EXPECT_FLOAT_EQ(d[0].score, 0.4f);
  EXPECT_FLOAT_EQ(d[1].score, 0.8f);
  EXPECT_FLOAT_EQ(d[1].box.x1, 8);
}

TEST(DecodeYolo, PartialRowThrowsShapeError) {
  EXPECT_THROW(DecodeYolo(std::vector<float>(13), 7, 0.25f), ShapeError);
}

TEST(DecodeYolo, RowWithoutAClassScoreThrowsShapeError) {
  EXPECT_THROW(DecodeYolo(std::vector<float>(10), 5, 0.25f), ShapeError);
}

// ---- Nms ----

TEST(Nms, OverlapAboveTheThresholdDropsTheLowerScore) {
  // IoU 81 / 119 = 0.68 > 0.45.
  const std::vector<Detection> kept =
      Nms({Det(1, 1, 11, 11, 0.8f, 0), Det(0, 0, 10, 10, 0.9f, 0)}, 0.45f);
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_FLOAT_EQ(kept[0].score, 0.9f);
}

TEST(Nms, DifferentClassesNeverSuppressEachOther) {
  const std::vector<Detection> kept =
      Nms({Det(0, 0, 10, 10, 0.9f, 0), Det(0, 0, 10, 10, 0.8f, 1)}, 0.45f);
  EXPECT_EQ(kept.size(), 2u);
}

TEST(Nms, ASuppressedBoxSuppressesNothing) {
  // b overlaps a (0.54, dropped); c overlaps b (0.54) but a only by 0.25: c stays.
  const std::vector<Detection> kept = Nms(
      {Det(60, 0, 70, 10, 0.95f, 1), Det(63, 0, 73, 10, 0.75f, 1), Det(66, 0, 76, 10, 0.65f, 1)},
      0.45f);
  ASSERT_EQ(kept.size(), 2u);
  EXPECT_FLOAT_EQ(kept[1].score, 0.65f);
}

TEST(Nms, ResultIsSortedByDescendingScore) {
  const std::vector<Detection> kept =
      Nms({Det(0, 0, 1, 1, 0.3f, 0), Det(5, 5, 6, 6, 0.9f, 1), Det(9, 9, 10, 10, 0.6f, 0)}, 0.45f);
  ASSERT_EQ(kept.size(), 3u);
  EXPECT_FLOAT_EQ(kept[0].score, 0.9f);
  EXPECT_FLOAT_EQ(kept[1].score, 0.6f);
  EXPECT_FLOAT_EQ(kept[2].score, 0.3f);
}

TEST(Nms, NothingInNothingOut) { EXPECT_TRUE(Nms({}, 0.45f).empty()); }

// Hand-made boxes, each group against one mistake (tools/capstone_nms_ref.py says which),
// and the indices torchvision.ops.batched_nms keeps at IoU 0.45, printed by
//   /usr/bin/python3 tools/capstone_nms_ref.py
TEST(Nms, KeepsWhatTorchvisionsBatchedNmsKeepsOnHandMadeBoxes) {
  // One box per line, as tools/capstone_nms_ref.py prints them.
  // clang-format off
  const std::vector<std::array<float, 6>> boxes = {
      // x1, y1, x2, y2, score, class
      {1.0f, 1.0f, 11.0f, 11.0f, 0.8f, 0},
      {0.0f, 0.0f, 10.0f, 10.0f, 0.9f, 0},
      {1.0f, 1.0f, 11.0f, 11.0f, 0.85f, 1},
      {20.0f, 0.0f, 30.0f, 10.0f, 0.7f, 0},
      {26.0f, 0.0f, 36.0f, 10.0f, 0.6f, 0},
      {40.0f, 0.0f, 44.0f, 4.0f, 0.5f, 2},
      {41.6f, 0.0f, 45.6f, 4.0f, 0.4f, 2},
      {60.0f, 0.0f, 70.0f, 10.0f, 0.95f, 1},
      {63.0f, 0.0f, 73.0f, 10.0f, 0.75f, 1},
      {66.0f, 0.0f, 76.0f, 10.0f, 0.65f, 1},
  };
  // clang-format on
  const std::vector<size_t> torchvision_keeps = {7, 1, 2, 3, 9, 4, 5, 6};
  std::vector<Detection> all;
  for (const auto& b : boxes)
    all.push_back(Det(b[0], b[1], b[2], b[3], b[4], static_cast<int>(b[5])));
  const std::vector<Detection> kept = Nms(all, 0.45f);
  ASSERT_EQ(kept.size(), torchvision_keeps.size());
  for (size_t k = 0; k < kept.size(); ++k) {
    // Scores are distinct, so the score names the box.
    EXPECT_EQ(kept[k].score, all[torchvision_keeps[k]].score) << "rank " << k;
  }
}

// 300 seeded boxes of 3 classes crowded into a 160x160 field, and torchvision's choice
// (final_project/test/data/make_nms_ref.py wrote both .npy files).
TEST(Nms, KeepsWhatTorchvisionsBatchedNmsKeepsOn300CrowdedBoxes) {
  const std::string data = std::string(KUIPER_SOURCE_DIR) + "/final_project/test/data/";
  const NpyArray boxes = LoadNpy(data + "nms_boxes.npy");
  const NpyArray keep = LoadNpy(data + "nms_keep.npy");
  ASSERT_EQ(boxes.shape, (std::vector<int64_t>{300, 6}));
  std::vector<Detection> all;
  for (size_t i = 0; i < 300; ++i) {
    const float* b = &boxes.data[i * 6];
    all.push_back(Det(b[0], b[1], b[2], b[3], b[4], static_cast<int>(b[5])));
  }
  const std::vector<Detection> kept = Nms(all, 0.45f);
  ASSERT_EQ(kept.size(), keep.data.size());
  for (size_t k = 0; k < kept.size(); ++k) {
    EXPECT_EQ(kept[k].score, all[static_cast<size_t>(keep.data[k])].score) << "rank " << k;
  }
}

// ---- UnLetterbox ----

// The letterbox's own map, image -> letterboxed pixels: scale, then shift by the padding.
Box ToLetterboxed(const Box& b, float scale, int pad_left, int pad_top) {
  const auto left = static_cast<float>(pad_left), top = static_cast<float>(pad_top);
  return {b.x1 * scale + left, b.y1 * scale + top, b.x2 * scale + left, b.y2 * scale + top};
}

void ExpectSameBox(const Box& got, const Box& want) {
  EXPECT_NEAR(got.x1, want.x1, 1e-3f);
  EXPECT_NEAR(got.y1, want.y1, 1e-3f);
  EXPECT_NEAR(got.x2, want.x2, 1e-3f);
  EXPECT_NEAR(got.y2, want.y2, 1e-3f);
}

TEST(UnLetterbox, UndoesTheLetterboxOfALandscapeImage) {
  // 1280x720 into 640: scale min(640/1280, 640/720) = 0.5, 640x360, pad (640-360)/2 = 140
  // rows on top. (100, 200)-(300, 400) -> (50, 240)-(150, 340) -> back.
  const Box box{100, 200, 300, 400};
  const Box boxed = ToLetterboxed(box, 0.5f, 0, 140);
  ExpectSameBox(boxed, {50, 240, 150, 340});
  ExpectSameBox(UnLetterbox(boxed, 0.5f, 0, 140, 1280, 720), box);
}

TEST(UnLetterbox, UndoesTheLetterboxOfAPortraitImage) {
  // 480x640 into 320: scale 0.5, 240x320, pad (320-240)/2 = 40 columns on the left.
  const Box box{10, 20, 470, 600};
  ExpectSameBox(UnLetterbox(ToLetterboxed(box, 0.5f, 40, 0), 0.5f, 40, 0, 480, 640), box);
}

TEST(UnLetterbox, UndoesAnOddPadding) {
  // 100x47 into 96: scale min(96/47, 96/100) = 0.96, 96x45 (round(45.12)),
  // dh = (96 - 45) / 2 = 25.5: top round(25.4) = 25 rows, bottom 26.
  const Box box{12.5f, 3, 87.5f, 44};
  ExpectSameBox(UnLetterbox(ToLetterboxed(box, 0.96f, 0, 25), 0.96f, 0, 25, 100, 47), box);
}

TEST(UnLetterbox, ClipsCornersInThePaddingToZero) {
  // A box reaching into the top padding and left of the image: its corners stop at 0.
  const Box b = UnLetterbox({-10, 100, 300, 400}, 0.5f, 0, 140, 1280, 720);
  EXPECT_FLOAT_EQ(b.x1, 0);
  EXPECT_FLOAT_EQ(b.y1, 0);
  EXPECT_FLOAT_EQ(b.x2, 600);
  EXPECT_FLOAT_EQ(b.y2, 520);
}

}  // namespace
}  // namespace kuiper
