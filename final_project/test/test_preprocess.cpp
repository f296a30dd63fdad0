// Image preprocessing: YOLOv5's letterbox geometry on hand-computed cases and
// torchvision's resize + centre crop against PyTorch's own output.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <opencv2/imgcodecs.hpp>

#include "kuiper/error.hpp"
#include "kuiper/memory_limit.hpp"
#include "kuiper/npy.hpp"
#include "metrics.hpp"
#include "preprocess.hpp"
#include "test_files.hpp"

namespace kuiper::app {
namespace {

const std::string kData = std::string(KUIPER_SOURCE_DIR) + "/final_project/test/data/";

using test::TempPath;

TEST(Letterbox, Landscape1280x720ScalesByHalfAndPads140TopAndBottom) {
  const cv::Mat image(720, 1280, CV_8UC3, cv::Scalar(10, 20, 30));
  const Letterboxed out = Letterbox(image, 640);
  EXPECT_EQ(out.image.cols, 640);
  EXPECT_EQ(out.image.rows, 640);
  EXPECT_FLOAT_EQ(out.scale, 0.5f);
  EXPECT_EQ(out.pad_left, 0);
  EXPECT_EQ(out.pad_top, 140);
  // Rows 0..139 and 500..639 are grey 114; rows 140..499 hold the image.
  EXPECT_EQ(out.image.at<cv::Vec3b>(139, 320), cv::Vec3b(114, 114, 114));
  EXPECT_EQ(out.image.at<cv::Vec3b>(140, 320), cv::Vec3b(10, 20, 30));
  EXPECT_EQ(out.image.at<cv::Vec3b>(499, 320), cv::Vec3b(10, 20, 30));
  EXPECT_EQ(out.image.at<cv::Vec3b>(500, 320), cv::Vec3b(114, 114, 114));
}

TEST(Letterbox, PortraitPadsLeftAndRight) {
  const cv::Mat image(640, 480, CV_8UC3, cv::Scalar(1, 2, 3));
  const Letterboxed out = Letterbox(image, 640);
  EXPECT_FLOAT_EQ(out.scale, 1.f);
  EXPECT_EQ(out.pad_left, 80);
  EXPECT_EQ(out.pad_top, 0);
  EXPECT_EQ(out.image.at<cv::Vec3b>(0, 79), cv::Vec3b(114, 114, 114));
  EXPECT_EQ(out.image.at<cv::Vec3b>(0, 80), cv::Vec3b(1, 2, 3));
  EXPECT_EQ(out.image.at<cv::Vec3b>(0, 559), cv::Vec3b(1, 2, 3));
  EXPECT_EQ(out.image.at<cv::Vec3b>(0, 560), cv::Vec3b(114, 114, 114));
}

TEST(Letterbox, OddPaddingPutsTheExtraRowAtTheBottomAsYolov5Does) {
  // scale = min(64/51, 64/100) = 0.64, new height round(32.64) = 33,
  // dh = 15.5: top = round(15.4) = 15, bottom = round(15.6) = 16.
  const cv::Mat image(51, 100, CV_8UC3, cv::Scalar(50, 50, 50));
  const Letterboxed out = Letterbox(image, 64);
  EXPECT_FLOAT_EQ(out.scale, 0.64f);
  EXPECT_EQ(out.pad_top, 15);
  EXPECT_EQ(out.image.at<cv::Vec3b>(14, 10), cv::Vec3b(114, 114, 114));
  EXPECT_EQ(out.image.at<cv::Vec3b>(15, 10), cv::Vec3b(50, 50, 50));
  EXPECT_EQ(out.image.at<cv::Vec3b>(47, 10), cv::Vec3b(50, 50, 50));
  EXPECT_EQ(out.image.at<cv::Vec3b>(48, 10), cv::Vec3b(114, 114, 114));
}

TEST(Letterbox, SmallImageIsScaledUp) {
  const cv::Mat image(100, 200, CV_8UC3, cv::Scalar(0, 0, 0));
  const Letterboxed out = Letterbox(image, 640);
  EXPECT_FLOAT_EQ(out.scale, 3.2f);
  EXPECT_EQ(out.pad_top, 160);
}

TEST(Letterbox, EmptyImageThrowsShapeError) { EXPECT_THROW(Letterbox(cv::Mat(), 640), ShapeError); }

// Compares ResizeCenterCrop on tiny.png with PyTorch's interpolate + crop
// (make_preprocess_ref.py).
void ExpectMatchesTorch(int resize, int crop) {
  const cv::Mat rgb = LoadRgbImage(kData + "tiny.png");
  const sftensor got = ResizeCenterCrop(*RgbToTensor(rgb), resize, crop);
  const NpyArray want = LoadNpy(kData + "tiny_resize" + std::to_string(resize) + "_crop" +
                                std::to_string(crop) + ".npy");
  ASSERT_EQ(got->raw_shapes(),
            (std::vector<uint32_t>{3, static_cast<uint32_t>(crop), static_cast<uint32_t>(crop)}));
  EXPECT_LE(MaxAbsDiff(got->values(), want.data), 1e-5f);
}

TEST(ResizeCenterCrop, DownscaleMatchesPyTorch) { ExpectMatchesTorch(16, 14); }

TEST(ResizeCenterCrop, UpscaleMatchesPyTorch) { ExpectMatchesTorch(30, 28); }

TEST(ResizeCenterCrop, ShorterSideBecomesResizeForPortraitImages) {
  Tensor<float> image(3, 300, 200);
  image.Fill(0.5f);
  const sftensor out = ResizeCenterCrop(image, 256, 224);
  EXPECT_EQ(out->raw_shapes(), (std::vector<uint32_t>{3, 224, 224}));
  EXPECT_FLOAT_EQ(out->at(0, 0, 0), 0.5f);
}

TEST(ResizeCenterCrop, CropLargerThanResizeThrows) {
  const Tensor<float> image(3, 30, 30);
  EXPECT_THROW(ResizeCenterCrop(image, 16, 20), ShapeError);
}

TEST(RgbToTensor, KeepsRgbPlanesInZeroToOne) {
  const cv::Mat image(2, 3, CV_8UC3, cv::Scalar(51, 102, 255));  // R, G, B bytes
  const sftensor t = RgbToTensor(image);
  ASSERT_EQ(t->raw_shapes(), (std::vector<uint32_t>{3, 2, 3}));
  EXPECT_FLOAT_EQ(t->at(0, 1, 2), 0.2f);
  EXPECT_FLOAT_EQ(t->at(1, 1, 2), 0.4f);
  EXPECT_FLOAT_EQ(t->at(2, 0, 0), 1.f);
}

TEST(ClassifyInput, Gives3x224x224ForAnyImage) {
  const cv::Mat image(480, 640, CV_8UC3, cv::Scalar(255, 255, 255));
  const sftensor t = ClassifyInput(image);
  ASSERT_EQ(t->raw_shapes(), (std::vector<uint32_t>{3, 224, 224}));
  EXPECT_NEAR(t->at(0, 100, 100), (1.f - 0.485f) / 0.229f, 1e-5);
}

TEST(LoadRgbImage, SwapsOpenCvsBgrToRgb) {
  const std::string path = TempPath("red.png");
  cv::imwrite(path, cv::Mat(4, 4, CV_8UC3, cv::Scalar(0, 0, 255)));  // BGR red
  const cv::Mat rgb = LoadRgbImage(path);
  EXPECT_EQ(rgb.at<cv::Vec3b>(0, 0), cv::Vec3b(255, 0, 0));
}

TEST(LoadRgbImage, MissingFileThrowsNamingIt) {
  try {
    LoadRgbImage("/nonexistent/picture.png");
    FAIL() << "expected kuiper::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/picture.png"), std::string::npos);
  }
}

TEST(LoadRgbImage, FileThatIsNotAnImageThrows) {
  const std::string path = TempPath("not_an_image.png");
  std::ofstream(path) << "hello";
  EXPECT_THROW(LoadRgbImage(path), Error);
}

// tiny.png is 37x23: 851 pixels of three floats, 10212 bytes.
TEST(LoadRgbImage, ImageWhoseFloatCopyIsExactlyTheLimitLoads) {
  const MemoryLimitScope limit(10212);
  EXPECT_EQ(LoadRgbImage(kData + "tiny.png").size(), cv::Size(37, 23));
}

TEST(LoadRgbImage, ImageWhoseFloatCopyExceedsTheLimitIsRefusedNamingIt) {
  const MemoryLimitScope limit(10211);
  try {
    LoadRgbImage(kData + "tiny.png");
    FAIL() << "expected kuiper::ResourceError";
  } catch (const ResourceError& e) {
    EXPECT_EQ(std::string(e.what()), "image '" + kData +
                                         "tiny.png' (37x23) as float32 would take 10212 bytes "
                                         "(0.00 GiB), more than the memory limit of 10211 bytes "
                                         "(0.00 GiB)");
  }
}

}  // namespace
}  // namespace kuiper::app
