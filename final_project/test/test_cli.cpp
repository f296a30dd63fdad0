// The `kuiper` binary as a user runs it: exit codes, one-line errors, and the
// subcommands on the committed fixtures and the default image.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "kuiper/npy.hpp"
#include "metrics.hpp"

namespace kuiper::app {
namespace {

const std::string kRoot = KUIPER_SOURCE_DIR;
const std::string kFixtures = kRoot + "/models/fixtures/";
const std::string kImage = kRoot + "/final_project/data/shapes.png";

// A scratch file of this process: ctest runs tests in parallel, and both
// presets' tests may run at once.
std::string TempPath(const std::string& name) {
  return testing::TempDir() + "/final_" + std::to_string(getpid()) + "_" + name;
}

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

TEST(Cli, RunsAnOnnxModelThroughTheImporter) {
  const std::string dir = kRoot + "/build/models/resnet18/";
  const Outcome o = Kuiper("run " + dir + "resnet18.onnx " + dir + "resnet18.input.npy --expect " +
                           dir + "resnet18.output.npy");
  EXPECT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.out.find(": ok"), std::string::npos) << o.out;
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
  const Outcome o = Kuiper("convert " + kFixtures + "tiny_net.pnnx.param -o " +
                           TempPath("x.pnnx.param"));
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
  ExpectOneErrorLine(o, "expects tensors of shape (3,16,16)");
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

TEST(Cli, MissingDefaultModelNamesTheGeneratorCommand) {
  const Outcome o = Kuiper("classify " + kImage, "KUIPER_MODELS=/nonexistent-models");
  EXPECT_EQ(o.status, 1);
  ExpectOneErrorLine(o, "/usr/bin/python3 tools/make_models.py");
}

TEST(Cli, ClassifyPrintsTopKAndSaysTheWeightsAreSeeded) {
  const Outcome o = Kuiper("classify " + kImage + " --topk 3");
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.out.find("seeded random weights"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("\n   3  "), std::string::npos) << o.out;  // rank 3 printed
  EXPECT_EQ(o.out.find("\n   4  "), std::string::npos) << o.out;  // and no rank 4
}

TEST(Cli, DetectWritesTheAnnotatedImage) {
  const std::string path = TempPath("detect.jpg");
  std::filesystem::remove(path);
  const Outcome o = Kuiper("detect " + kImage + " --conf 0.05 --out " + path);
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.out.find("detection(s)"), std::string::npos) << o.out;
  EXPECT_TRUE(std::filesystem::file_size(path) > 0);
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

}  // namespace
}  // namespace kuiper::app
