// The models trained here on generated shapes (tools/train_shapes.py writes
// them into build/models; the build's `models` target runs it): the engine gives
// PyTorch's answers on fixed generated images, the classifier names every image
// of a fixed small set, and the CLI's preprocessing is the one they were trained
// with. A missing model fails the test, naming the command that makes it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "kuiper/graph.hpp"
#include "kuiper/npy.hpp"
#include "metrics.hpp"
#include "model_files.hpp"
#include "postprocess.hpp"
#include "preprocess.hpp"

namespace kuiper::app {
namespace {

namespace fs = std::filesystem;

std::string Folder(const std::string& model) {
  return std::string(KUIPER_MODELS_DIR) + "/" + model;
}

std::string File(const std::string& model, const std::string& suffix) {
  return Folder(model) + "/" + model + suffix;
}

::testing::AssertionResult TrainedFileExists(const std::string& path) {
  if (fs::is_regular_file(path)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << path << " is missing: train the shape models with `" << kTrainShapesCommand << "` in "
         << KUIPER_SOURCE_DIR << " (or build the `models` target)";
}

// Asserts that the model's graph, weights and reference batch exist.
::testing::AssertionResult Trained(const std::string& model) {
  for (const std::string& path :
       {File(model, ".pnnx.param"), File(model, ".pnnx.bin"), File(model, ".input.npy"),
        File(model, ".output.npy"), Folder(model) + "/classes.txt"}) {
    ::testing::AssertionResult exists = TrainedFileExists(path);
    if (!exists) return exists;
  }
  return ::testing::AssertionSuccess();
}

std::unique_ptr<RuntimeGraph> Load(const std::string& model) {
  auto graph = std::make_unique<RuntimeGraph>(File(model, ".pnnx.param"), File(model, ".pnnx.bin"));
  graph->Build();
  return graph;
}

int InputSide(const RuntimeGraph& graph) {
  return graph.input_operators().at(0)->output_operand->shapes.at(2);
}

// The sample images, sorted: samples/NN_<class>.png (classifier), samples/NN.png (detector).
std::vector<fs::path> Samples(const std::string& model) {
  std::vector<fs::path> paths;
  for (const auto& entry : fs::directory_iterator(Folder(model) + "/samples")) {
    if (entry.path().extension() == ".png") paths.push_back(entry.path());
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

// Item i of a batch of (batch, ...) values.
std::vector<float> Item(const NpyArray& a, size_t i) {
  const size_t size = a.data.size() / static_cast<size_t>(a.shape.at(0));
  return {a.data.begin() + static_cast<std::ptrdiff_t>(i * size),
          a.data.begin() + static_cast<std::ptrdiff_t>((i + 1) * size)};
}

// The trained classifier's accuracy (held-out top-1 >= 0.95, README "The trained
// models"), checked on a set small enough to read: it names every sample image.
TEST(ShapesClassifier, NamesEverySampleImage) {
  ASSERT_TRUE(Trained(kShapesClassifier));
  const std::vector<std::string> names = LoadLabels(Folder(kShapesClassifier) + "/classes.txt");
  ASSERT_EQ(names, (std::vector<std::string>{"circle", "square", "triangle", "star", "cross"}));
  const std::vector<fs::path> images = Samples(kShapesClassifier);
  ASSERT_EQ(images.size(), 10u) << "two per class";
  const auto graph = Load(kShapesClassifier);
  for (const fs::path& image : images) {
    // "03_triangle.png" -> "triangle"
    const std::string stem = image.stem().string();
    const std::string want = stem.substr(stem.find('_') + 1);
    const std::vector<sftensor> logits = graph->Forward(
        std::vector<sftensor>{ClassifyInput(LoadRgbImage(image.string()), InputSide(*graph))});
    const int top = TopK(logits.at(0)->values(), 1).at(0).index;
    EXPECT_EQ(LabelOf(names, top), want)
        << image << ": the classifier is not trained enough (tools/train_shapes.py, CLASSIFY)";
  }
}

// The pixels the CLI feeds the classifier are those it was trained on:
// ClassifyInput equals models/shapes.py's classify_input, which wrote input.npy.
TEST(ShapesClassifier, CliPreprocessingIsTheTrainingOne) {
  ASSERT_TRUE(Trained(kShapesClassifier));
  const NpyArray inputs = LoadNpy(File(kShapesClassifier, ".input.npy"));
  const std::vector<fs::path> images = Samples(kShapesClassifier);
  ASSERT_EQ(static_cast<size_t>(inputs.shape.at(0)), images.size());
  for (size_t i = 0; i < images.size(); ++i) {
    const sftensor x =
        ClassifyInput(LoadRgbImage(images[i].string()), static_cast<int>(inputs.shape.at(2)));
    // Both are row-major (3, S, S); the float resize may round differently in the last bit.
    EXPECT_LE(MaxAbsDiff(BatchToNpy({x}).data, Item(inputs, i)), 1e-5f) << images[i];
  }
}

TEST(ShapesClassifier, SampleBatchMatchesPyTorch) {
  ASSERT_TRUE(Trained(kShapesClassifier));
  const NpyArray want = LoadNpy(File(kShapesClassifier, ".output.npy"));
  const NpyArray got = BatchToNpy(
      Load(kShapesClassifier)->Forward(NpyToBatch(LoadNpy(File(kShapesClassifier, ".input.npy")))));
  ASSERT_EQ(got.shape, want.shape);
  EXPECT_LE(MaxAbsDiff(got.data, want.data), 1e-4f * std::max(1.f, MaxAbs(want.data)));
  for (int64_t i = 0; i < want.shape[0]; ++i) {
    EXPECT_EQ(TopK(Item(got, i), 1).at(0).index, TopK(Item(want, i), 1).at(0).index)
        << "image " << i;
  }
}

TEST(ShapesDetector, CliPreprocessingIsTheTrainingOne) {
  ASSERT_TRUE(Trained(kShapesDetector));
  const NpyArray inputs = LoadNpy(File(kShapesDetector, ".input.npy"));
  const std::vector<fs::path> images = Samples(kShapesDetector);
  ASSERT_EQ(static_cast<size_t>(inputs.shape.at(0)), images.size());
  for (size_t i = 0; i < images.size(); ++i) {
    const Letterboxed boxed =
        Letterbox(LoadRgbImage(images[i].string()), static_cast<int>(inputs.shape.at(2)));
    const sftensor x = RgbToTensor(boxed.image);
    EXPECT_LE(MaxAbsDiff(BatchToNpy({x}).data, Item(inputs, i)), 1e-6f) << images[i];
  }
}

// Same class, score within 1e-3, corners within 1e-3 of the box size plus 1e-3 px
// (float32 rounding of the head's logits, as for YOLOv5s in test_end_to_end.cpp).
bool SameShapeDetection(const Detection& got, const Detection& want) {
  const float tolerance = 1e-3f * std::max({1.f, want.box.width(), want.box.height()}) + 1e-3f;
  return got.class_id == want.class_id && std::abs(got.score - want.score) <= 1e-3f &&
         std::abs(got.box.x1 - want.box.x1) <= tolerance &&
         std::abs(got.box.y1 - want.box.y1) <= tolerance &&
         std::abs(got.box.x2 - want.box.x2) <= tolerance &&
         std::abs(got.box.y2 - want.box.y2) <= tolerance;
}

// At a score threshold of 0.01, not the CLI's 0.25: every box PyTorch keeps must be
// the engine's too, and the low threshold keeps more of them to compare (whether the
// detector finds the right shapes is Cli.DetectFindsEachShapeOfTheDefaultImage's question).
TEST(ShapesDetector, DetectionsAfterNmsMatchPyTorchsOnEachSampleImage) {
  ASSERT_TRUE(Trained(kShapesDetector));
  const NpyArray want = LoadNpy(File(kShapesDetector, ".output.npy"));
  const NpyArray got = BatchToNpy(
      Load(kShapesDetector)->Forward(NpyToBatch(LoadNpy(File(kShapesDetector, ".input.npy")))));
  ASSERT_EQ(got.shape, want.shape);
  ASSERT_EQ(want.shape.size(), 3u);
  const size_t row = static_cast<size_t>(want.shape[2]);
  for (int64_t i = 0; i < want.shape[0]; ++i) {
    const std::vector<Detection> g = Nms(DecodeYolo(Item(got, i), row, 0.01f), 0.45f);
    const std::vector<Detection> w = Nms(DecodeYolo(Item(want, i), row, 0.01f), 0.45f);
    EXPECT_FALSE(w.empty()) << "image " << i << ": PyTorch detects nothing to compare";
    EXPECT_EQ(g.size(), w.size()) << "image " << i;
    std::vector<bool> used(g.size(), false);
    for (const Detection& d : w) {
      size_t k = 0;
      while (k < g.size() && (used[k] || !SameShapeDetection(g[k], d))) ++k;
      if (k < g.size()) {
        used[k] = true;
      } else {
        ADD_FAILURE() << "image " << i << ": PyTorch's detection (class " << d.class_id
                      << ", score " << d.score << ", box " << d.box.x1 << "," << d.box.y1 << ","
                      << d.box.x2 << "," << d.box.y2 << ") has no match in the engine's";
      }
    }
  }
}

}  // namespace
}  // namespace kuiper::app
