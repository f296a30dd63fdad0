// The `kuiper` binary as a user runs it: exit codes, one-line errors, and the
// subcommands on the committed fixtures and the default image.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <opencv2/imgcodecs.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "kuiper/graph.hpp"
#include "kuiper/npy.hpp"
#include "metrics.hpp"
#include "postprocess.hpp"
#include "preprocess.hpp"
#include "test_files.hpp"

namespace kuiper::app {
namespace {

const std::string kRoot = KUIPER_SOURCE_DIR;
const std::string kFixtures = kRoot + "/models/fixtures/";
const std::string kImage = kRoot + "/final_project/data/shapes.png";

using test::TempPath;

struct Outcome {
  int status = -1;
  std::string out;
  std::string err;
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Runs `kuiper <args>` through the shell (args are quoted by the caller).
Outcome Kuiper(const std::string& args, const std::string& env = "") {
  const std::string base = TempPath(testing::UnitTest::GetInstance()->current_test_info()->name());
  const std::string out = base + ".out";
  const std::string err = base + ".err";
  const std::string command =
      env + " '" + KUIPER_CLI + "' " + args + " >'" + out + "' 2>'" + err + "'";
  const int raw = std::system(command.c_str());
  Outcome outcome;
  outcome.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  outcome.out = ReadFile(out);
  outcome.err = ReadFile(err);
  std::filesystem::remove(out);
  std::filesystem::remove(err);
  return outcome;
}

// An error is exactly one line on stderr, starting "kuiper: error: ".
void ExpectOneErrorLine(const Outcome& o, const std::string& mentions) {
  EXPECT_EQ(o.err.rfind("kuiper: error: ", 0), 0u) << o.err;
  EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o.err;
  EXPECT_NE(o.err.find(mentions), std::string::npos) << o.err;
}

TEST(Cli, RunMatchesTheReferenceAndExits0) {
  const Outcome o = Kuiper("run " + kFixtures + "tiny_net.pnnx.param " + kFixtures +
                           "tiny_net.input.npy --expect " + kFixtures + "tiny_net.output.npy");
  EXPECT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.out.find("max abs diff"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find(": ok"), std::string::npos) << o.out;
}

// --verbose is glog's verbose level 1 on stderr: Build's decisions, no timings.
TEST(Cli, VerboseLogsTheRouteOfEachConvolutionAndNoTimes) {
  const Outcome o = Kuiper("run " + kFixtures + "tiny_net.pnnx.param " + kFixtures +
                           "tiny_net.input.npy --verbose");
  EXPECT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.err.find("tiny_net.pnnx.param: convolution 'conv1' (nn.Conv2d) takes the "),
            std::string::npos)
      << o.err;
  EXPECT_NE(o.err.find("tiny_net.pnnx.param: convolution 'conv2' (nn.Conv2d) takes the "),
            std::string::npos)
      << o.err;
  EXPECT_EQ(o.err.find(" took "), std::string::npos) << o.err;
}

TEST(Cli, DoubleVerboseAlsoTimesEachOperator) {
  const Outcome o =
      Kuiper("run " + kFixtures + "tiny_net.pnnx.param " + kFixtures + "tiny_net.input.npy -vv");
  EXPECT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.err.find("tiny_net.pnnx.param: 'fc' (nn.Linear) took "), std::string::npos) << o.err;
}

// The level is glog's own flag: its environment variable works without the option.
TEST(Cli, GlogsOwnVerboseVariableWorksWithoutTheOption) {
  const Outcome o = Kuiper(
      "run " + kFixtures + "tiny_net.pnnx.param " + kFixtures + "tiny_net.input.npy", "GLOG_v=1");
  EXPECT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.err.find("convolution 'conv1' (nn.Conv2d) takes the "), std::string::npos) << o.err;
}

TEST(Cli, RunWithAWrongReferenceExits3) {
  NpyArray wrong = LoadNpy(kFixtures + "tiny_net.output.npy");
  wrong.data[3] += 0.5f;
  const std::string path = TempPath("wrong_ref.npy");
  SaveNpy(path, wrong);
  const Outcome o = Kuiper("run " + kFixtures + "tiny_net.pnnx.param " + kFixtures +
                           "tiny_net.input.npy --expect " + path);
  EXPECT_EQ(o.status, 3);
  ExpectOneErrorLine(o, "differs from");
}

// One output element 0.5 from the reference: --tolerance 1 allows 1 * max(1, max |reference|),
// at least 1, and passes; --tolerance 0.1 allows a tenth of that, less than 0.5.
TEST(Cli, RunToleranceDecidesTheVerdict) {
  NpyArray off = LoadNpy(kFixtures + "tiny_net.output.npy");
  off.data[3] += 0.5f;
  ASSERT_LT(0.1f * std::max(1.f, MaxAbs(off.data)), 0.4f);
  const std::string path = TempPath("off_by_half.npy");
  SaveNpy(path, off);
  const std::string run = "run " + kFixtures + "tiny_net.pnnx.param " + kFixtures +
                          "tiny_net.input.npy --expect " + path;
  const Outcome loose = Kuiper(run + " --tolerance 1");
  EXPECT_EQ(loose.status, 0) << loose.err;
  const Outcome tight = Kuiper(run + " --tolerance 0.1");
  EXPECT_EQ(tight.status, 3);
  ExpectOneErrorLine(tight, "differs from");
}

TEST(Cli, RunWritesTheOutputNpy) {
  const std::string path = TempPath("out.npy");
  std::filesystem::remove(path);
  const Outcome o = Kuiper("run " + kFixtures + "tiny_net.pnnx.param " + kFixtures +
                           "tiny_net.input.npy -o " + path);
  ASSERT_EQ(o.status, 0) << o.err;
  const NpyArray got = LoadNpy(path);
  const NpyArray want = LoadNpy(kFixtures + "tiny_net.output.npy");
  ASSERT_EQ(got.shape, want.shape);
  EXPECT_LE(MaxAbsDiff(got.data, want.data), 1e-4f * std::max(1.f, MaxAbs(want.data)));
}

// The real-pnnx graph shape of a YOLOv5 head on 5-D tensors (reshape to
// (1,3,7,4,5), permute, tensor_split with 3 outputs, sigmoid, pnnx.Attribute,
// torch.tensor, broadcasting expressions, cat; models/tiny_yolo_head.py), to
// 1e-5 x max(1, max |PyTorch|).
TEST(Cli, RunsTheFiveDYoloHeadFixtureAsPyTorchDoes) {
  const std::string base = kFixtures + "tiny_yolo_head";
  const Outcome o = Kuiper("run " + base + ".pnnx.param " + base + ".input.npy --expect " + base +
                           ".output.npy --tolerance 1e-5");
  EXPECT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.out.find("shape (1,60,7)"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find(": ok"), std::string::npos) << o.out;
}

// A PNNX graph whose input batch is `?` runs at the batch of the array given
// (kuiper/test/data/graph/dynamic_batch_5d.pnnx.param: reshape to 5-D,
// permute, sigmoid, times torch.tensor (1,2,3), tensor_split and cat back
// rotated; it has no weights, so an empty .pnnx.bin zip goes beside it).
TEST(Cli, RunsAQuestionMarkBatchGraphAtBatchThree) {
  const std::string param = TempPath("dynamic.pnnx.param");
  std::filesystem::copy_file(kRoot + "/kuiper/test/data/graph/dynamic_batch_5d.pnnx.param", param,
                             std::filesystem::copy_options::overwrite_existing);
  const char kEmptyZip[22] = {'P', 'K', 5, 6};  // end of central directory, no entries
  std::ofstream(TempPath("dynamic.pnnx.bin"), std::ios::binary).write(kEmptyZip, 22);
  NpyArray x{{3, 6, 2, 3}, {}};
  for (int i = 0; i < 3 * 36; ++i) x.data.push_back(std::sin(0.37f * i) * 3);
  SaveNpy(TempPath("dynamic_x.npy"), x);
  const std::string out = TempPath("dynamic_y.npy");
  const Outcome o = Kuiper("run " + param + " " + TempPath("dynamic_x.npy") + " -o " + out);
  ASSERT_EQ(o.status, 0) << o.err;
  const NpyArray y = LoadNpy(out);
  ASSERT_EQ(y.shape, (std::vector<int64_t>{3, 2, 2, 3, 3}));
  // out[n,a,c,d,k] = sigmoid(x[n].reshape(2,3,2,3)[a,b,c,d]) * (b+1), b = (k+1) % 3.
  for (int n = 0; n < 3; ++n) {
    for (int i = 0; i < 36; ++i) {
      const int a = i / 18, c = i / 9 % 2, d = i / 3 % 3, k = i % 3, b = (k + 1) % 3;
      const float r = x.data[n * 36 + ((a * 3 + b) * 2 + c) * 3 + d];
      EXPECT_NEAR(y.data[n * 36 + i], (b + 1) / (1 + std::exp(-r)), 1e-6f) << n << "," << i;
    }
  }
}

TEST(Cli, RunsAnOnnxModelThroughTheImporter) {
  const std::string dir = kRoot + "/build/models/resnet18/";
  const Outcome o = Kuiper("run " + dir + "resnet18.onnx " + dir + "resnet18.input.npy --expect " +
                           dir + "resnet18.output.npy");
  EXPECT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.out.find(": ok"), std::string::npos) << o.out;
}

// Inputs as declared: ONNX's test_matmul_2d takes A (3,4) and B (4,3), no
// batch axis. Each array goes in with its full shape.
const std::string kMatmul2d = "/usr/share/libonnx-testdata/data/node/test_matmul_2d/model.onnx";

// A row-major array of `shape` holding first, first+1, ...
NpyArray Counting(const std::vector<int64_t>& shape, float first = 0) {
  NpyArray array;
  array.shape = shape;
  int64_t count = 1;
  for (int64_t d : shape) count *= d;
  for (int64_t i = 0; i < count; ++i) array.data.push_back(first + static_cast<float>(i));
  return array;
}

// Load-time inputs: ONNX's test_reshape_reordered_all_dims takes
// its target shape as graph input 'shape'. The engine fixes shapes when it
// builds the graph, so kuiper run binds that input from its array, says so
// on one line, and feeds only 'data' at run time.
TEST(Cli, RunBindsAShapeInputAtLoadTimeAndSaysSo) {
  const std::string model =
      "/usr/share/libonnx-testdata/data/node/test_reshape_reordered_all_dims/model.onnx";
  const NpyArray data = Counting({2, 3, 4});
  SaveNpy(TempPath("data.npy"), data);
  SaveNpy(TempPath("shape.npy"), NpyArray{{3}, {4, 2, 3}});
  const std::string out = TempPath("reshaped.npy");
  const Outcome o = Kuiper("run " + model + " " + TempPath("data.npy") + " " +
                           TempPath("shape.npy") + " -o " + out);
  ASSERT_EQ(o.status, 0) << o.err << " (see docs/onnx.md §7, load-time inputs)";
  EXPECT_NE(o.out.find("bound at load time"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("'shape'"), std::string::npos) << o.out;
  EXPECT_EQ(o.out.find("'data'"), std::string::npos) << "data stays a run-time input: " << o.out;
  const NpyArray reshaped = LoadNpy(out);
  EXPECT_EQ(reshaped.shape, (std::vector<int64_t>{4, 2, 3}));
  EXPECT_EQ(reshaped.data, data.data) << "a reshape moves no value";
}

// Every value known at load time (docs/onnx.md §1): ONNX's test_shape returns
// Shape(x), whose input is read only through its shape. kuiper run binds x,
// the engine graph has no run-time input, and the output is the constant (3,4,5).
TEST(Cli, RunOfAGraphWithEveryInputBoundWritesTheConstantOutput) {
  const std::string model = "/usr/share/libonnx-testdata/data/node/test_shape/model.onnx";
  SaveNpy(TempPath("x.npy"), Counting({3, 4, 5}));
  const std::string out = TempPath("shape.npy");
  const Outcome o = Kuiper("run " + model + " " + TempPath("x.npy") + " -o " + out);
  ASSERT_EQ(o.status, 0) << o.err << " (see docs/onnx.md §1, graphs of constants)";
  EXPECT_NE(o.out.find("bound at load time"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("batch 1"), std::string::npos) << o.out;
  const NpyArray shape = LoadNpy(out);
  EXPECT_EQ(shape.shape, (std::vector<int64_t>{3}));
  EXPECT_EQ(shape.data, (std::vector<float>{3, 4, 5}));
}

TEST(Cli, RunFeedsAMatmulItsTwoDimensionalInputsAsDeclared) {
  const NpyArray a = Counting({3, 4}), b = Counting({4, 3}, -5);
  SaveNpy(TempPath("a.npy"), a);
  SaveNpy(TempPath("b.npy"), b);
  const std::string out = TempPath("c.npy");
  const Outcome o =
      Kuiper("run " + kMatmul2d + " " + TempPath("a.npy") + " " + TempPath("b.npy") + " -o " + out);
  ASSERT_EQ(o.status, 0) << o.err << " (see final_project/README.md, kuiper run)";
  const NpyArray c = LoadNpy(out);
  ASSERT_EQ(c.shape, (std::vector<int64_t>{3, 3})) << "the output as ONNX declares it, no batch";
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) {
      float want = 0;  // the naive product
      for (int k = 0; k < 4; ++k) want += a.data[i * 4 + k] * b.data[k * 3 + j];
      EXPECT_FLOAT_EQ(c.data[i * 3 + j], want) << "C[" << i << "][" << j << "]";
    }
  }
}

TEST(Cli, RunRefusesAnArrayOfAnotherShapeThanDeclared) {
  SaveNpy(TempPath("a.npy"), Counting({3, 4}));
  SaveNpy(TempPath("b.npy"), Counting({3, 4}));  // B is declared (4,3)
  const Outcome o = Kuiper("run " + kMatmul2d + " " + TempPath("a.npy") + " " + TempPath("b.npy"));
  EXPECT_EQ(o.status, 1);
  ExpectOneErrorLine(o, "is declared (4,3)");
}

TEST(Cli, RunsAPnnxOperatorWithThreeOutputs) {
  // torch.tensor_split(x, 3, dim=1) as the real pnnx writes it (one line, three
  // outputs), its pieces used out of order: cat(relu(p0), p2, p1).
  const std::string text =
      "7767517\n5 6\n"
      "pnnx.Input in 0 1 0 #0=(1,6)f32\n"
      "torch.tensor_split split 1 3 0 1 2 3 dim=1 sections=3\n"
      "nn.ReLU relu 1 1 1 4\n"
      "torch.cat cat 3 1 4 3 2 5 dim=1\n"
      "pnnx.Output out 1 0 5\n";
  const std::string param = TempPath("split.pnnx.param");
  std::ofstream(param) << text;
  // No weights: the .bin is an empty zip (its end-of-central-directory record alone).
  std::ofstream(TempPath("split.pnnx.bin"), std::ios::binary)
      << std::string("PK\x05\x06", 4) << std::string(18, '\0');
  NpyArray x = Counting({1, 6}, -3);  // -3 -2 | -1 0 | 1 2
  SaveNpy(TempPath("x.npy"), x);
  const Outcome o = Kuiper("run " + param + " " + TempPath("x.npy") + " -o " + TempPath("y.npy"));
  ASSERT_EQ(o.status, 0) << o.err;
  const NpyArray y = LoadNpy(TempPath("y.npy"));
  EXPECT_EQ(y.shape, (std::vector<int64_t>{1, 6}));
  EXPECT_EQ(y.data, (std::vector<float>{0, 0, 1, 2, -1, 0}));
}

TEST(Cli, ConvertWritesAPnnxModelThatRunsTheSame) {
  const std::string dir = kRoot + "/build/models/resnet18/";
  const std::string param = TempPath("converted.pnnx.param");
  const Outcome converted = Kuiper("convert " + dir + "resnet18.onnx -o " + param);
  ASSERT_EQ(converted.status, 0) << converted.err;
  const Outcome o = Kuiper("run " + param + " " + dir + "resnet18.input.npy --expect " + dir +
                           "resnet18.output.npy");
  EXPECT_EQ(o.status, 0) << o.err;
  std::filesystem::remove(param);
  std::filesystem::remove(param.substr(0, param.size() - 6) + ".bin");
}

TEST(Cli, ConvertRefusesANonOnnxModel) {
  const Outcome o =
      Kuiper("convert " + kFixtures + "tiny_net.pnnx.param -o " + TempPath("x.pnnx.param"));
  EXPECT_EQ(o.status, 1);
  ExpectOneErrorLine(o, ".onnx");
}

TEST(Cli, MissingInputFileIsOneErrorLine) {
  const Outcome o = Kuiper("run " + kFixtures + "tiny_net.pnnx.param /nonexistent/in.npy");
  EXPECT_EQ(o.status, 1);
  ExpectOneErrorLine(o, "/nonexistent/in.npy");
}

TEST(Cli, MissingImageIsOneErrorLine) {
  const Outcome o = Kuiper("classify /nonexistent/cat.jpg");
  EXPECT_EQ(o.status, 1);
  ExpectOneErrorLine(o, "/nonexistent/cat.jpg");
}

TEST(Cli, ModelWithWrongExtensionIsOneErrorLine) {
  const Outcome o =
      Kuiper("run " + kFixtures + "tiny_net.input.npy " + kFixtures + "tiny_net.input.npy");
  EXPECT_EQ(o.status, 1);
  ExpectOneErrorLine(o, "not a .pnnx.param or .onnx file");
}

TEST(Cli, InputWithWrongExtensionIsOneErrorLine) {
  const Outcome o =
      Kuiper("run " + kFixtures + "tiny_net.pnnx.param " + kFixtures + "tiny_net.pnnx.bin");
  EXPECT_EQ(o.status, 1);
  ExpectOneErrorLine(o, "must be a .npy file");
}

TEST(Cli, MismatchedInputShapeIsOneErrorLine) {
  // tiny_net takes (N,3,16,16); tiny_groupconv's input is (1,4,9,9).
  const Outcome o =
      Kuiper("run " + kFixtures + "tiny_net.pnnx.param " + kFixtures + "tiny_groupconv.input.npy");
  EXPECT_EQ(o.status, 1);
  ExpectOneErrorLine(o, "is declared (1,3,16,16)");
}

TEST(Cli, UnknownSubcommandIsAUsageError) {
  const Outcome o = Kuiper("frobnicate x");
  EXPECT_EQ(o.status, 2);
  ExpectOneErrorLine(o, "unknown subcommand 'frobnicate'");
}

TEST(Cli, UnknownOptionIsAUsageError) {
  const Outcome o = Kuiper("bench tiny --no-such-option");
  EXPECT_EQ(o.status, 2);
  ExpectOneErrorLine(o, "--no-such-option");
}

TEST(Cli, NoSubcommandIsAUsageError) {
  const Outcome o = Kuiper("");
  EXPECT_EQ(o.status, 2);
  ExpectOneErrorLine(o, "subcommand");
}

TEST(Cli, HelpExits0) {
  const Outcome o = Kuiper("--help");
  EXPECT_EQ(o.status, 0);
  EXPECT_NE(o.out.find("classify"), std::string::npos);
}

// Without a model, classify tries the trained shape classifier, then the seeded ResNet18.
TEST(Cli, MissingDefaultModelNamesBothCommands) {
  const Outcome o = Kuiper("classify " + kImage, "KUIPER_MODELS=/nonexistent-models");
  EXPECT_EQ(o.status, 1);
  ExpectOneErrorLine(o, "shapes_resnet18 (`/usr/bin/python3 tools/train_shapes.py`)");
  EXPECT_NE(o.err.find("resnet18 (`/usr/bin/python3 tools/make_models.py`)"), std::string::npos)
      << o.err;
}

TEST(Cli, MissingTrainedModelNamesTheTrainingCommand) {
  const Outcome o =
      Kuiper("detect " + kImage + " --model shapes_yolov5", "KUIPER_MODELS=/nonexistent-models");
  EXPECT_EQ(o.status, 1);
  ExpectOneErrorLine(o, "/usr/bin/python3 tools/train_shapes.py");
}

const std::string kShapeModels = std::string(KUIPER_MODELS_DIR);

TEST(Cli, ClassifyUsesTheTrainedShapeClassifierAndSaysSo) {
  const std::string samples = kShapeModels + "/shapes_resnet18/samples";
  ASSERT_TRUE(std::filesystem::is_directory(samples))
      << samples << " is missing: run /usr/bin/python3 tools/train_shapes.py in " << kRoot;
  std::string image;  // the first star of the samples, NN_star.png
  for (const auto& entry : std::filesystem::directory_iterator(samples)) {
    const std::string name = entry.path().filename().string();
    if (name.size() > 9 && name.substr(name.size() - 9) == "_star.png" &&
        (image.empty() || entry.path().string() < image)) {
      image = entry.path().string();
    }
  }
  ASSERT_FALSE(image.empty()) << "no NN_star.png in " << samples;
  const Outcome o = Kuiper("classify " + image + " --topk 1");
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.out.find("shapes_resnet18.pnnx.param"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("model: shapes_resnet18, trained by tools/train_shapes.py"),
            std::string::npos)
      << o.out;
  EXPECT_NE(o.out.find("\n   1      3  star "), std::string::npos) << o.out;
}

// One row of `kuiper detect`'s table: class, score, x1 y1 x2 y2 (image pixels).
struct Row {
  std::string name;
  float score = 0, x1 = 0, y1 = 0, x2 = 0, y2 = 0;
};

// The rows after the table's header line ("class score x1 y1 x2 y2").
std::vector<Row> DetectionRows(const std::string& out) {
  std::vector<Row> rows;
  std::istringstream lines(out);
  std::string line;
  bool table = false;
  while (std::getline(lines, line)) {
    if (line.rfind("class ", 0) == 0) {
      table = true;
      continue;
    }
    Row r;
    std::istringstream fields(line);
    if (table && fields >> r.name >> r.score >> r.x1 >> r.y1 >> r.x2 >> r.y2) rows.push_back(r);
  }
  return rows;
}

// The test's own IoU (the capstone's is the student's to write): the overlap of the two
// intervals on each axis, multiplied.
float Iou(const Row& a, const Row& b) {
  auto overlap = [](float lo1, float hi1, float lo2, float hi2) {
    return std::max(0.f, std::min(hi1, hi2) - std::max(lo1, lo2));
  };
  const float both = overlap(a.x1, a.x2, b.x1, b.x2) * overlap(a.y1, a.y2, b.y1, b.y2);
  return both / ((a.x2 - a.x1) * (a.y2 - a.y1) + (b.x2 - b.x1) * (b.y2 - b.y1) - both);
}

// The default image holds one shape of each kind, whose boxes make_shapes.py
// wrote beside it (data/shapes.boxes.txt): the trained detector finds each of
// them, of the right class and overlapping the truth by IoU >= 0.5, and nothing else.
TEST(Cli, DetectFindsEachShapeOfTheDefaultImage) {
  const std::string model = kShapeModels + "/shapes_yolov5/shapes_yolov5.pnnx.param";
  ASSERT_TRUE(std::filesystem::is_regular_file(model))
      << model << " is missing: run /usr/bin/python3 tools/train_shapes.py in " << kRoot;
  const std::string path = TempPath("shapes.png");
  const Outcome o = Kuiper("detect " + kImage + " --out " + path);
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.out.find("shapes_yolov5.pnnx.param"), std::string::npos) << o.out;
  const std::vector<Row> got = DetectionRows(o.out);
  std::vector<Row> truth;
  std::istringstream boxes(ReadFile(kRoot + "/final_project/data/shapes.boxes.txt"));
  for (Row r; boxes >> r.name >> r.x1 >> r.y1 >> r.x2 >> r.y2;) truth.push_back(r);
  ASSERT_EQ(truth.size(), 5u) << "final_project/data/shapes.boxes.txt: one line per shape";
  EXPECT_EQ(got.size(), truth.size()) << o.out;
  for (const Row& want : truth) {
    float best = 0;
    for (const Row& d : got) {
      if (d.name == want.name) best = std::max(best, Iou(d, want));
    }
    EXPECT_GE(best, 0.5f) << "no " << want.name << " box overlaps the truth (" << want.x1 << " "
                          << want.y1 << " " << want.x2 << " " << want.y2 << ") by IoU 0.5: "
                          << "the detector is not trained enough (tools/train_shapes.py, DETECT)\n"
                          << o.out;
  }
  std::filesystem::remove(path);
}

TEST(Cli, ClassifyPrintsTopKAndSaysTheWeightsAreSeeded) {
  const Outcome o = Kuiper("classify " + kImage + " --model resnet18 --topk 3");
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.out.find("seeded random weights"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("\n   3  "), std::string::npos) << o.out;  // rank 3 printed
  EXPECT_EQ(o.out.find("\n   4  "), std::string::npos) << o.out;  // and no rank 4
}

// The class ResNet18 ranks first for the default image, found here through the library
// rather than read from the CLI, with its name from imagenet_classes.txt beside the model.
TEST(Cli, ClassifyNamesTheTopClassFromTheImageNetList) {
  const std::string dir = std::string(KUIPER_MODELS_DIR) + "/resnet18/";
  const std::vector<std::string> names = LoadLabels(dir + "imagenet_classes.txt");
  // torchvision's category list: first, second and last of the 1000.
  ASSERT_EQ(names.size(), 1000u);
  ASSERT_EQ(names[0], "tench");
  ASSERT_EQ(names[1], "goldfish");
  ASSERT_EQ(names[999], "toilet tissue");
  RuntimeGraph graph(dir + "resnet18.pnnx.param", dir + "resnet18.pnnx.bin");
  graph.Build();
  const std::vector<sftensor> logits =
      graph.Forward(std::vector<sftensor>{ClassifyInput(LoadRgbImage(kImage))});
  const int top = TopK(logits.at(0)->values(), 1).at(0).index;

  const Outcome o = Kuiper("classify " + kImage + " --model " + dir + " --topk 1");
  ASSERT_EQ(o.status, 0) << o.err;
  // The table row: rank, class index, name.
  EXPECT_NE(o.out.find(fmt::format("\n   1  {:>5}  {} ", top, names[top])), std::string::npos)
      << "class " << top << " '" << names[top] << "' not at rank 1 in:\n"
      << o.out;
}

TEST(Cli, DetectWritesTheAnnotatedImage) {
  const std::string path = TempPath("detect.jpg");
  std::filesystem::remove(path);
  const Outcome o = Kuiper("detect " + kImage + " --conf 0.05 --out " + path);
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.out.find("detection(s)"), std::string::npos) << o.out;
  EXPECT_TRUE(std::filesystem::file_size(path) > 0);
}

// Whether any pixel within one pixel of (x, y) differs between two images of the same size.
bool ChangedNear(const cv::Mat& a, const cv::Mat& b, float x, float y) {
  const int cx = static_cast<int>(std::lround(x)), cy = static_cast<int>(std::lround(y));
  for (int row = std::max(0, cy - 1); row <= std::min(a.rows - 1, cy + 1); ++row) {
    for (int col = std::max(0, cx - 1); col <= std::min(a.cols - 1, cx + 1); ++col) {
      if (a.at<cv::Vec3b>(row, col) != b.at<cv::Vec3b>(row, col)) return true;
    }
  }
  return false;
}

// One detection of the seeded YOLOv5s (it always finds some; the trained detector may not)
// kept and written as PNG (lossless): the image differs from the input on
// the sides of the printed box (the top one carries the label), and not at the box's centre
// nor at the image corner farthest from it, so it is a box outline on the unchanged image.
TEST(Cli, DetectDrawsThePrintedBoxIntoTheImage) {
  const std::string path = TempPath("boxes.png");
  const Outcome o = Kuiper("detect " + kImage + " --model yolov5s --max-det 1 --out " + path);
  ASSERT_EQ(o.status, 0) << o.err;
  // The row after the table header ends with the box: x1 y1 x2 y2.
  const size_t header = o.out.find("\nclass ");
  ASSERT_NE(header, std::string::npos) << o.out;
  const size_t row = o.out.find('\n', header + 1) + 1;
  std::istringstream line(o.out.substr(row, o.out.find('\n', row) - row));
  const std::vector<std::string> words{std::istream_iterator<std::string>(line), {}};
  ASSERT_GE(words.size(), 6u) << o.out;
  const float x1 = std::stof(words[words.size() - 4]), y1 = std::stof(words[words.size() - 3]);
  const float x2 = std::stof(words[words.size() - 2]), y2 = std::stof(words[words.size() - 1]);

  const cv::Mat input = cv::imread(kImage);
  const cv::Mat drawn = cv::imread(path);
  ASSERT_EQ(drawn.size(), input.size());
  const float mid_x = (x1 + x2) / 2, mid_y = (y1 + y2) / 2;
  EXPECT_TRUE(ChangedNear(input, drawn, x1, mid_y)) << "left side of " << o.out;
  EXPECT_TRUE(ChangedNear(input, drawn, x2, mid_y)) << "right side of " << o.out;
  EXPECT_TRUE(ChangedNear(input, drawn, mid_x, y2)) << "bottom side of " << o.out;
  EXPECT_FALSE(ChangedNear(input, drawn, mid_x, mid_y)) << "centre of " << o.out;
  const float far_x = mid_x < input.cols / 2 ? input.cols - 1 : 0;
  const float far_y = mid_y < input.rows / 2 ? input.rows - 1 : 0;
  EXPECT_FALSE(ChangedNear(input, drawn, far_x, far_y)) << "far corner, box in " << o.out;
  std::filesystem::remove(path);
}

TEST(Cli, DetectRejectsAnOutputItCannotWrite) {
  const Outcome o = Kuiper("detect " + kImage + " --out result.xyz");
  EXPECT_EQ(o.status, 1);
  ExpectOneErrorLine(o, "result.xyz");
}

TEST(Cli, BenchProfilePrintsLatencyAndAnOperatorTable) {
  const Outcome o = Kuiper("bench " + kFixtures +
                           "tiny_net.pnnx.param --runs 3 --threads 1 "
                           "--profile");
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.out.find("per image: median"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("nn.Conv2d"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("share %"), std::string::npos) << o.out;
}

TEST(Cli, BenchPrintsNoProgressWhenStderrIsNotATerminal) {
  const Outcome o =
      Kuiper("bench " + kFixtures + "tiny_net.pnnx.param --warmup 2 --runs 3 --threads 1");
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_EQ(o.err, "");
}

// util-linux `script` runs the command on a pseudo-terminal and copies what it prints there:
// here only stderr, since stdout goes to /dev/null.
TEST(Cli, BenchShowsItsRunsOnATerminalLineRewrittenInPlace) {
  const std::string path = TempPath("terminal.txt");
  const std::string command = std::string("script -qec \"'") + KUIPER_CLI + "' bench " + kFixtures +
                              "tiny_net.pnnx.param --warmup 2 --runs 3 --threads 1 >/dev/null\" " +
                              "/dev/null </dev/null >'" + path + "'";
  ASSERT_EQ(std::system(command.c_str()), 0);
  const std::string terminal = ReadFile(path);
  std::filesystem::remove(path);
  for (const char* step :
       {"warm-up run 1/2", "warm-up run 2/2", "timed run 1/3", "timed run 3/3"}) {
    EXPECT_NE(terminal.find(std::string("\r\033[Kbench: ") + step), std::string::npos)
        << step << " in " << terminal;
  }
  EXPECT_EQ(terminal.substr(terminal.size() - 4), "\r\033[K") << "the line is erased at the end";
}

// ResNet18's 20 convolutions: 13 are 3x3 stride-1 layers of 64 to 512 channels, which
// take the Winograd route by default on any CPU (the direct route depends on AVX-512).
TEST(Cli, BenchSaysWhichRouteEachConvolutionTakes) {
  const std::string dir = std::string(KUIPER_MODELS_DIR) + "/resnet18/";
  const Outcome o = Kuiper("bench " + dir + " --warmup 0 --runs 1 --threads 1");
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.out.find("convolutions: 20 ("), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("winograd 13,"), std::string::npos) << o.out;
}

// --conv-route im2col: every convolution on the lab's unfolding, none on the core's routes.
TEST(Cli, BenchConvRouteIm2colTakesEveryConvolutionThroughTheUnfolding) {
  const std::string dir = std::string(KUIPER_MODELS_DIR) + "/resnet18/";
  const Outcome o = Kuiper("bench " + dir + " --warmup 0 --runs 1 --threads 1 --conv-route im2col");
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.out.find("convolutions: 20 (im2col 20, in-place 0, winograd 0, direct 0;"),
            std::string::npos)
      << o.out;
}

// The same switch on `run`, which still matches PyTorch's output on the im2col route.
TEST(Cli, RunConvRouteIm2colMatchesTheReference) {
  const std::string dir = std::string(KUIPER_MODELS_DIR) + "/resnet18/";
  const Outcome o =
      Kuiper("run " + dir + "resnet18.pnnx.param " + dir + "resnet18.input.npy --expect " + dir +
             "resnet18.output.npy --conv-route im2col");
  ASSERT_EQ(o.status, 0) << o.out << o.err;
  EXPECT_NE(o.out.find("convolutions: 20 (im2col 20, in-place 0, winograd 0, direct 0;"),
            std::string::npos)
      << o.out;
}

// --conv-route winograd-f4: the same layers on the Winograd route, those of
// up to 256 channels on F(4x4, 3x3), still within the reference's bound.
TEST(Cli, RunConvRouteWinogradF4MatchesTheReference) {
  const std::string dir = std::string(KUIPER_MODELS_DIR) + "/resnet18/";
  const Outcome o =
      Kuiper("run " + dir + "resnet18.pnnx.param " + dir + "resnet18.input.npy --expect " + dir +
             "resnet18.output.npy --conv-route winograd-f4");
  ASSERT_EQ(o.status, 0) << o.out << o.err;
  EXPECT_NE(o.out.find("winograd 13 (10 on F(4x4, 3x3)),"), std::string::npos) << o.out;
}

// --no-plan: every operand owns its tensors (RuntimeOptions::buffer_planning off).
TEST(Cli, BenchNoPlanSaysTheActivationsAreNotPlanned) {
  const std::string model = kFixtures + "tiny_net.pnnx.param";
  const Outcome planned = Kuiper("bench " + model + " --warmup 0 --runs 1");
  ASSERT_EQ(planned.status, 0) << planned.err;
  EXPECT_NE(planned.out.find("MB planned buffer"), std::string::npos) << planned.out;
  const Outcome owned = Kuiper("bench " + model + " --warmup 0 --runs 1 --no-plan");
  ASSERT_EQ(owned.status, 0) << owned.err;
  EXPECT_NE(owned.out.find("activations: not planned (--no-plan)"), std::string::npos) << owned.out;
}

// --versus: the model built a second time for another route and timed in
// turn with the first; each graph's routes are printed under its times.
TEST(Cli, BenchVersusTimesTheModelOnBothRoutes) {
  const std::string dir = std::string(KUIPER_MODELS_DIR) + "/resnet18/";
  const Outcome o = Kuiper("bench " + dir + " --warmup 0 --runs 2 --threads 1 --versus im2col");
  ASSERT_EQ(o.status, 0) << o.err;
  const size_t versus = o.out.find("versus --conv-route im2col: median ");
  ASSERT_NE(versus, std::string::npos) << o.out;
  EXPECT_LT(o.out.find("winograd 13,"), versus) << o.out;
  EXPECT_NE(o.out.find("convolutions: 20 (im2col 20,", versus), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("im2col / default, per pair of runs: median ", versus), std::string::npos)
      << o.out;
}

TEST(Cli, BenchVersusWithProfileIsAUsageError) {
  const Outcome o =
      Kuiper("bench " + kFixtures + "tiny_net.pnnx.param --runs 1 --versus im2col --profile");
  EXPECT_EQ(o.status, 2);
  ExpectOneErrorLine(o, "--profile");
}

TEST(Cli, UnknownVersusRouteIsAUsageError) {
  const Outcome o = Kuiper("bench " + kFixtures + "tiny_net.pnnx.param --versus fastest");
  EXPECT_EQ(o.status, 2);
  ExpectOneErrorLine(o, "--versus");
}

TEST(Cli, UnknownConvRouteIsAUsageError) {
  const Outcome o = Kuiper("bench " + kFixtures + "tiny_net.pnnx.param --conv-route fastest");
  EXPECT_EQ(o.status, 2);
  ExpectOneErrorLine(o, "--conv-route");
}

TEST(Cli, GraphCountsResNet18sParameters) {
  // torchvision's 11,689,512 less the 4,800 weights and 4,800 biases of the
  // BatchNorms (4,800 channels), plus the 4,800 conv biases folding adds.
  const Outcome o = Kuiper("graph " + kFixtures + "resnet18.pnnx.param");
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.out.find("11684712 parameters"), std::string::npos) << o.out;
}

TEST(Cli, GraphDotIsADigraph) {
  const Outcome o = Kuiper("graph " + kFixtures + "tiny_net.pnnx.param --dot");
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_EQ(o.out.rfind("digraph \"tiny_net\" {", 0), 0u) << o.out;
  EXPECT_NE(o.out.find("->"), std::string::npos);
}

TEST(Cli, GraphDotLabelsBreakLinesWithDotsNewlineEscape) {
  // One \n between type, name and shape: an escaped backslash (\\n) would
  // make Graphviz print the two characters instead of breaking the line.
  const Outcome o = Kuiper("graph " + kFixtures + "tiny_net.pnnx.param --dot");
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.out.find(R"dot("conv1" [label="nn.Conv2d\nconv1\n(1,8,16,16)"];)dot"),
            std::string::npos)
      << o.out;
  EXPECT_EQ(o.out.find(R"(\\n)"), std::string::npos) << o.out;
}

// ---- bad input: every case is one "kuiper: error:" line and a non-zero status ----

// Writes `bytes` to a scratch file named `name` and returns its path.
std::string WriteTemp(const std::string& name, const std::string& bytes) {
  const std::string path = TempPath(name);
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

TEST(CliBadInput, MissingModelFileIsOneErrorLine) {
  const Outcome o = Kuiper("run /nonexistent/model.pnnx.param " + kFixtures + "tiny_net.input.npy");
  EXPECT_EQ(o.status, 1);
  ExpectOneErrorLine(o, "model file '/nonexistent/model.pnnx.param' does not exist");
}

TEST(CliBadInput, MissingBinBesideTheParamIsOneErrorLine) {
  const std::string param = TempPath("lonely.pnnx.param");
  std::filesystem::copy_file(kFixtures + "tiny_net.pnnx.param", param,
                             std::filesystem::copy_options::overwrite_existing);
  const Outcome o = Kuiper("run " + param + " " + kFixtures + "tiny_net.input.npy");
  EXPECT_EQ(o.status, 1);
  ExpectOneErrorLine(o, "lonely.pnnx.bin' does not exist");
  std::filesystem::remove(param);
}

TEST(CliBadInput, CorruptModelIsOneErrorLineNamingFileAndLine) {
  const std::string param = WriteTemp("corrupt.pnnx.param", "7767517\n1 1\nnn.ReLU r 1\n");
  WriteTemp("corrupt.pnnx.bin", "");
  const Outcome o = Kuiper("run " + param + " " + kFixtures + "tiny_net.input.npy");
  EXPECT_EQ(o.status, 1);
  ExpectOneErrorLine(o, param + ":3: expected '<type> <name> <input count> <output count> ...'");
}

TEST(CliBadInput, CorruptImageIsOneErrorLine) {
  const std::string image = WriteTemp("corrupt.png", "\x89PNG\r\n\x1a\n but not really");
  const Outcome o = Kuiper("classify " + image);
  EXPECT_EQ(o.status, 1);
  ExpectOneErrorLine(o, "is not an image OpenCV can read");
}

TEST(CliBadInput, ImageThatIsADirectoryIsOneErrorLine) {
  const Outcome o = Kuiper("detect " + kRoot + "/final_project/data");
  EXPECT_EQ(o.status, 1);
  ExpectOneErrorLine(o, "/final_project/data' is not a file");
}

TEST(CliBadInput, OutputWithWrongExtensionIsOneErrorLine) {
  const Outcome o = Kuiper("run " + kFixtures + "tiny_net.pnnx.param " + kFixtures +
                           "tiny_net.input.npy -o out.txt");
  EXPECT_EQ(o.status, 1);
  ExpectOneErrorLine(o, "output 'out.txt' must be a .npy file");
}

TEST(CliBadInput, CorruptNpyInputIsOneErrorLine) {
  const std::string npy =
      WriteTemp("corrupt.npy", std::string("\x93NUMPY\x01\x00\xff\x00{'descr'", 17));
  const Outcome o = Kuiper("run " + kFixtures + "tiny_net.pnnx.param " + npy);
  EXPECT_EQ(o.status, 1);
  ExpectOneErrorLine(o, npy + ": not a usable .npy file: the header is cut off");
}

TEST(CliBadInput, WrongNumberOfInputsIsOneErrorLine) {
  const std::string input = kFixtures + "tiny_net.input.npy";
  const Outcome o = Kuiper("run " + kFixtures + "tiny_net.pnnx.param " + input + " " + input);
  EXPECT_EQ(o.status, 1);
  ExpectOneErrorLine(o, "has 1 input(s), got 2 .npy file(s)");
}

TEST(CliBadInput, UnknownOptionBeforeAMissingArgumentIsNamed) {
  const Outcome o = Kuiper("run --no-such-option");
  EXPECT_EQ(o.status, 2);
  ExpectOneErrorLine(o, "unknown option '--no-such-option' (see kuiper run --help)");
}

TEST(CliBadInput, UnknownOptionWithoutSubcommandIsNamed) {
  const Outcome o = Kuiper("--no-such-option");
  EXPECT_EQ(o.status, 2);
  ExpectOneErrorLine(o, "unknown option '--no-such-option'");
}

TEST(CliBadInput, MissingArgumentIsAUsageError) {
  const Outcome o = Kuiper("run " + kFixtures + "tiny_net.pnnx.param");
  EXPECT_EQ(o.status, 2);
  ExpectOneErrorLine(o, "INPUT is required");
}

TEST(CliBadInput, ConvertUsageErrorIsNotAnUnknownSubcommand) {
  const Outcome o = Kuiper("convert model.onnx");
  EXPECT_EQ(o.status, 2);
  ExpectOneErrorLine(o, "--out is required");
}

TEST(CliBadInput, NonNumericOptionValueIsAUsageError) {
  const Outcome o = Kuiper("classify " + kImage + " --topk many");
  EXPECT_EQ(o.status, 2);
  ExpectOneErrorLine(o, "--topk");
}

TEST(CliBadInput, NegativeThreadsIsAUsageError) {
  const Outcome o = Kuiper("bench " + kFixtures + "tiny_net.pnnx.param --threads -1");
  EXPECT_EQ(o.status, 2);
  ExpectOneErrorLine(o, "--threads -1 >= 0");
}

TEST(CliBadInput, TopkZeroIsAUsageError) {
  const Outcome o = Kuiper("classify " + kImage + " --topk 0");
  EXPECT_EQ(o.status, 2);
  ExpectOneErrorLine(o, "--topk 0 is not at least 1");
}

TEST(CliBadInput, ConfAboveOneIsAUsageError) {
  const Outcome o = Kuiper("detect " + kImage + " --conf 2");
  EXPECT_EQ(o.status, 2);
  ExpectOneErrorLine(o, "--conf 2 and --iou 0.45 must lie in [0, 1]");
}

TEST(CliBadInput, NegativeToleranceIsAUsageError) {
  const Outcome o = Kuiper("run " + kFixtures + "tiny_net.pnnx.param " + kFixtures +
                           "tiny_net.input.npy --tolerance -1");
  EXPECT_EQ(o.status, 2);
  ExpectOneErrorLine(o, "--tolerance -1 is not >= 0");
}

// tiny_net.input.npy is 3200 bytes: a 128-byte header and (1,3,16,16) f32.
TEST(CliBadInput, InputOverMaxMemoryIsOneErrorLineNamingTheLimit) {
  const Outcome o = Kuiper("run " + kFixtures + "tiny_net.pnnx.param " + kFixtures +
                           "tiny_net.input.npy --max-memory 2K");
  EXPECT_EQ(o.status, 1);
  ExpectOneErrorLine(o,
                     "tiny_net.input.npy: reading the whole file would take 3200 bytes (0.00 GiB), "
                     "more than the memory limit of 2048 bytes (0.00 GiB) (raise it with "
                     "--max-memory)");
}

// The input file fits 4 KiB, but tiny_net's weights and its (1,3,16,16) f32
// input operand (3072 bytes) together do not.
TEST(CliBadInput, ModelOverMaxMemoryIsOneErrorLineNamingTheOperand) {
  const Outcome o = Kuiper("run " + kFixtures + "tiny_net.pnnx.param " + kFixtures +
                           "tiny_net.input.npy --max-memory 4K");
  EXPECT_EQ(o.status, 1);
  ExpectOneErrorLine(o, "more than the memory limit of 4096 bytes");
  EXPECT_NE(o.err.find("tiny_net.pnnx.param: at batch 1, the weights and the operands up to "),
            std::string::npos)
      << o.err;
}

TEST(CliBadInput, HugeDeclaredInputIsRefusedByTheDefaultLimit) {
  const std::string param = TempPath("huge_input.pnnx.param");
  std::filesystem::copy_file(kRoot + "/kuiper/test/data/limits/huge_input.pnnx.param", param,
                             std::filesystem::copy_options::overwrite_existing);
  // An empty zip (its end record only): the model has no weights.
  WriteTemp("huge_input.pnnx.bin", std::string("PK\x05\x06", 4) + std::string(18, '\0'));
  const Outcome o = Kuiper("bench " + param);
  EXPECT_EQ(o.status, 1);
  ExpectOneErrorLine(o, "operand '0' (1,3,100000,100000), output of 'input' (pnnx.Input)");
}

// @weight=(40000,30000)f32 is 4,800,000,000 bytes; the .pnnx.bin is empty, so
// the weight is refused before it is looked for.
TEST(CliBadInput, HugeDeclaredWeightIsRefusedByTheDefaultLimit) {
  const std::string param = TempPath("huge_weight.pnnx.param");
  std::filesystem::copy_file(kRoot + "/kuiper/test/data/limits/huge_weight.pnnx.param", param,
                             std::filesystem::copy_options::overwrite_existing);
  WriteTemp("huge_weight.pnnx.bin", std::string("PK\x05\x06", 4) + std::string(18, '\0'));
  const Outcome o = Kuiper("bench " + param);
  EXPECT_EQ(o.status, 1);
  ExpectOneErrorLine(o,
                     "huge_weight.pnnx.bin: entry 'linear.weight' (attribute @weight of operator "
                     "'linear' on param line 4): the weights up to this entry would take "
                     "4800000000 bytes (4.47 GiB), more than the memory limit of 4294967296 bytes "
                     "(4.00 GiB) (raise it with --max-memory)");
}

// shapes.png is 640x480: 307200 pixels of three floats, 3686400 bytes.
TEST(CliBadInput, ImageOverMaxMemoryIsOneErrorLineNamingTheImage) {
  const Outcome o = Kuiper("classify " + kImage + " --max-memory 1M");
  EXPECT_EQ(o.status, 1);
  ExpectOneErrorLine(o, "image '" + kImage +
                            "' (640x480) as float32 would take 3686400 bytes (0.00 GiB), more "
                            "than the memory limit of 1048576 bytes (0.00 GiB) (raise it with "
                            "--max-memory)");
}

TEST(CliBadInput, NegativeMaxMemoryIsAUsageError) {
  const Outcome o = Kuiper("graph " + kFixtures + "tiny_net.pnnx.param --max-memory -1");
  EXPECT_EQ(o.status, 2);
  ExpectOneErrorLine(o, "--max-memory: a size cannot be negative");
}

TEST(CliBadInput, MaxMemoryThatIsNoSizeIsAUsageError) {
  const Outcome o = Kuiper("graph " + kFixtures + "tiny_net.pnnx.param --max-memory lots");
  EXPECT_EQ(o.status, 2);
  ExpectOneErrorLine(o, "--max-memory");
}

}  // namespace
}  // namespace kuiper::app
