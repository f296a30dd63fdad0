// ONNX's own backend node tests (Debian's libonnx-testdata): every test whose
// operators the importer supports is converted, run and compared with ONNX's
// expected outputs. The table goes to <build>/onnx_conformance.md.
#include <gtest/gtest.h>
#include <onnx/defs/tensor_proto_util.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include "onnx_test_util.hpp"
#include "test_files.hpp"

namespace kuiper::testing {
namespace {

namespace fs = std::filesystem;

const char* kNodeTests = "/usr/share/libonnx-testdata/data/node";
constexpr float kTolerance = 1e-5f;
// The issue names these; each must exist in the data, be run and pass, so that
// a renamed or missing test cannot drop out of the check unseen.
const std::set<std::string> kMustPass = {"test_matmul_2d", "test_matmul_3d", "test_matmul_4d",
                                         "test_upsample_nearest"};

struct Row {
  std::string test, ops, status, detail;
  float diff = -1;
  bool must_pass = false;
};

onnx::TensorProto ReadTensor(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  onnx::TensorProto tensor;
  if (!in || !tensor.ParseFromIstream(&in)) throw Error("cannot read " + path.string());
  return tensor;
}

using Shape = std::vector<int64_t>;

// An expected output as floats: int64 ones (ArgMax, Size) travel as floats in
// the engine.
std::vector<float> ExpectedValues(const onnx::TensorProto& t) {
  if (t.data_type() == onnx::TensorProto::INT64) {
    const std::vector<int64_t> values = onnx::ParseData<int64_t>(&t);
    return {values.begin(), values.end()};
  }
  return OnnxTensorFloats(t);
}

// The engine shape of an ONNX value of shape `dims`: the same in batch mode; in
// single-item mode one item of it, (1, dims...), a scalar being an item of one value.
Shape EngineShapeOf(Shape dims, bool single_item) {
  if (single_item) dims.insert(dims.begin(), 1);
  if (dims.size() == 1) dims.push_back(1);
  return dims;
}

// An engine output's shape: its batch size, then the shape every item has.
Shape OutputShape(const std::vector<sftensor>& batch) {
  Shape shape = {static_cast<int64_t>(batch.size())};
  for (uint32_t d : batch.at(0)->raw_shapes()) shape.push_back(d);
  for (const sftensor& item : batch) {
    if (item->raw_shapes() != batch[0]->raw_shapes()) throw Error("batch items differ in shape");
  }
  return shape;
}

std::string OneLine(std::string text) {
  for (char& c : text) {
    if (c == '\n' || c == '|') c = ' ';
  }
  return text.size() > 160 ? text.substr(0, 160) + "..." : text;
}

Row RunNodeTest(const fs::path& dir, const std::set<std::string>& supported) {
  Row row;
  row.test = dir.filename().string();
  const onnx::ModelProto model = ReadOnnxModel((dir / "model.onnx").string());
  std::set<std::string> ops, missing;
  for (const auto& node : model.graph().node()) {
    ops.insert(node.op_type());
    if (!supported.count(node.op_type())) missing.insert(node.op_type());
  }
  row.ops = fmt::format("{}", fmt::join(ops, ","));
  row.must_pass = kMustPass.count(row.test) != 0;
  if (!missing.empty()) {
    row.status = "unsupported";
    row.detail = fmt::format("operator {}", fmt::join(missing, ","));
    return row;
  }
  // Many node tests pass weights, scales or shapes as graph inputs. When the
  // importer needs them constant, they are bound as initializers from their
  // input_K.pb (and the row says so); input 0 always stays a runtime input.
  const fs::path data = dir / "test_data_set_0";
  pnnx::Graph graph;
  size_t bound = 0;
  try {
    graph = ConvertOnnx(model);
  } catch (const std::exception& first) {
    onnx::ModelProto with_constants = model;
    auto* inputs = with_constants.mutable_graph()->mutable_input();
    while (inputs->size() > 1) {
      onnx::TensorProto t = ReadTensor(data / fmt::format("input_{}.pb", inputs->size() - 1));
      t.set_name(inputs->Get(inputs->size() - 1).name());
      *with_constants.mutable_graph()->add_initializer() = t;
      inputs->RemoveLast();
      ++bound;
    }
    try {
      if (bound == 0) throw;
      graph = ConvertOnnx(with_constants);
      row.detail = fmt::format("inputs 1..{} bound as constants", bound);
    } catch (const std::exception& e) {
      row.status = "rejected";
      row.detail = OneLine(bound ? e.what() : first.what());
      return row;
    }
  }
  RuntimeGraph runtime(graph, row.test);
  try {
    runtime.Build();
  } catch (const std::exception& e) {
    row.status = "rejected";
    row.detail = "engine layer: " + OneLine(e.what());
    return row;
  }
  row.must_pass = true;  // converted and built: the importer accepted its attributes
  try {
    std::vector<std::vector<sftensor>> inputs;
    for (size_t i = 0; i < runtime.input_operators().size(); ++i) {
      const onnx::TensorProto t = ReadTensor(data / fmt::format("input_{}.pb", i));
      inputs.push_back(
          ValuesToBatch(OnnxTensorFloats(t), runtime.input_operators()[i]->output_operand->shapes));
    }
    // Batch mode keeps ONNX shapes as they are; single-item mode puts a 1
    // before each (docs/onnx.md §2). The first input shows which: its engine
    // rank is its ONNX rank in batch mode and one more in single-item mode.
    const bool single_item = runtime.input_operators()[0]->output_operand->shapes.size() !=
                             static_cast<size_t>(ReadTensor(data / "input_0.pb").dims_size());
    const auto outputs = runtime.Forward(inputs);
    float diff = 0;
    for (size_t k = 0; k < outputs.size(); ++k) {
      const onnx::TensorProto t = ReadTensor(data / fmt::format("output_{}.pb", k));
      const Shape expected_shape =
          EngineShapeOf(Shape(t.dims().begin(), t.dims().end()), single_item);
      if (OutputShape(outputs[k]) != expected_shape) {
        throw Error(fmt::format("output {} has engine shape ({}), expected ({})", k,
                                fmt::join(OutputShape(outputs[k]), ","),
                                fmt::join(expected_shape, ",")));
      }
      // Measured against the reference's scale, as tools/onnx_node_tests_cli.py
      // and `kuiper run --tolerance` do: 1e-5 x max(1, max|ref|). (A product of
      // twelve values near 24621 is one float step, 0.002, from ONNX's.)
      const std::vector<float> expected = ExpectedValues(t);
      float scale = 1;
      for (float v : expected) scale = std::max(scale, std::abs(v));
      diff = std::max(diff, MaxAbsDiff(BatchToValues(outputs[k]), expected) / scale);
    }
    row.diff = diff;
    row.status = diff <= kTolerance ? "pass" : "fail";
  } catch (const std::exception& e) {
    row.status = "fail";
    row.detail = OneLine(e.what());
  }
  return row;
}

TEST(Conformance, SupportedOnnxNodeTestsPass) {
  ASSERT_TRUE(fs::exists(kNodeTests))
      << kNodeTests << " is missing: install Debian's libonnx-testdata (scripts/test.sh does)";
  std::set<std::string> supported;
  for (const std::string& type : SupportedOnnxOperators()) supported.insert(type);
  std::vector<fs::path> dirs;
  for (const auto& entry : fs::directory_iterator(kNodeTests)) dirs.push_back(entry.path());
  std::sort(dirs.begin(), dirs.end());
  std::vector<Row> rows;
  for (const fs::path& dir : dirs) {
    if (fs::exists(dir / "model.onnx")) rows.push_back(RunNodeTest(dir, supported));
  }
  for (const std::string& test : kMustPass) {
    EXPECT_TRUE(fs::exists(fs::path(kNodeTests) / test / "model.onnx"))
        << "must-pass test " << test << " is not in " << kNodeTests;
    EXPECT_TRUE(std::any_of(rows.begin(), rows.end(), [&](const Row& r) { return r.test == test; }))
        << "must-pass test " << test << " has no result row";
  }
  std::map<std::string, int> counts;
  std::vector<std::string> must_fail;
  std::string table =
      "| test | operators | status | max abs diff / max(1, max|ref|) | must pass | note "
      "|\n|---|---|---|---|---|---|\n";
  for (const Row& row : rows) {
    ++counts[row.status];
    if (row.must_pass && row.status != "pass") must_fail.push_back(row.test);
    if (row.status == "unsupported") continue;  // summarised below, not one line each
    table += fmt::format("| {} | {} | {} | {} | {} | {} |\n", row.test, row.ops, row.status,
                         row.diff < 0 ? "" : fmt::format("{:.3g}", row.diff),
                         row.must_pass ? "yes" : "no", row.detail);
  }
  std::map<std::string, int> unsupported_ops;
  for (const Row& row : rows) {
    if (row.status == "unsupported") ++unsupported_ops[row.detail];
  }
  std::string summary = fmt::format(
      "# ONNX node conformance\n\n{} tests: {} pass, {} fail, {} rejected (listed with the "
      "reason), {} unsupported (an operator the importer does not convert). Tolerance: max abs "
      "diff <= {} x max(1, max|ref|). Must-pass failures: {}.\n\n",
      rows.size(), counts["pass"], counts["fail"], counts["rejected"], counts["unsupported"],
      kTolerance, must_fail.empty() ? "none" : fmt::format("{}", fmt::join(must_fail, ", ")));
  std::string unsupported = "\n## Unsupported (tests per missing operator)\n\n";
  for (const auto& [op, n] : unsupported_ops) unsupported += fmt::format("- {}: {}\n", op, n);
  std::ofstream(test::BinaryDir() + "/onnx_conformance.md") << summary << table << unsupported;
  std::cout << summary;
  EXPECT_TRUE(must_fail.empty()) << "must-pass tests failing: "
                                 << fmt::format("{}", fmt::join(must_fail, ", "));
}

}  // namespace
}  // namespace kuiper::testing
