// kuiper: the finished engine from the command line. Arguments are parsed
// with CLI11; every failure ends as one line on stderr:
//   exit 1  an error (missing file, bad model, shape that does not fit, ...)
//   exit 2  a usage error (unknown subcommand or option, missing argument,
//           an option value out of range)
//   exit 3  `run --expect`: an output differs from its reference
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <glog/logging.h>
#include <malloc.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <exception>
#include <string>

#include "commands.hpp"
#include "kuiper/memory_limit.hpp"

namespace {

// One line: messages that span lines (CLI11's, some of OpenCV's) are joined.
void PrintError(const std::string& message) {
  std::string line = message;
  std::replace(line.begin(), line.end(), '\n', ' ');
  fmt::print(stderr, "kuiper: error: {}\n", line);
}

// CLI11 reports a missing argument before an unknown one, and takes any first
// word for a subcommand: name what the user most likely got wrong.
std::string UsageMessage(const CLI::App& app, const CLI::ParseError& error,
                         const std::string& first) {
  const std::vector<const CLI::App*> subcommands =
      app.get_subcommands([](const CLI::App*) { return true; });
  std::vector<std::string> names;
  for (const CLI::App* sub : subcommands) names.push_back(sub->get_name());
  const bool known = std::any_of(subcommands.begin(), subcommands.end(),
                                 [&](const CLI::App* sub) { return sub->check_name(first); });
  if (!first.empty() && first[0] != '-' && !known) {
    return fmt::format("unknown subcommand '{}' (expected {}; see kuiper --help)", first,
                       fmt::join(names, ", "));
  }
  for (const std::string& arg : app.remaining(/*recurse=*/true)) {
    if (arg.size() > 1 && arg[0] == '-') {
      return fmt::format("unknown option '{}' (see kuiper {}--help)", arg,
                         known ? first + " " : "");
    }
  }
  return fmt::format("{} (see kuiper {}--help)", error.what(), known ? first + " " : "");
}

}  // namespace

int main(int argc, char** argv) {
  using namespace kuiper::app;
#ifdef __GLIBC__
  // A forward pass allocates the same large buffers every time (im2col
  // matrices of up to 44 MB for YOLOv5s). By default glibc maps each from the
  // kernel and unmaps it on free, so every pass page-faults them in afresh
  // (docs/performance.md#graph-memory). Keep freed memory in the process
  // instead: the peak stays the same.
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
  CLI::App app{
      "kuiper: run PNNX models (ResNet18, YOLOv5s, ...) on the KuiperCourse engine.\n"
      "MODEL is a .pnnx.param file, a folder holding <folder name>.pnnx.param, or a\n"
      "generated model name (resnet18, yolov5s, shapes_resnet18, shapes_yolov5) looked\n"
      "up in $KUIPER_MODELS or <repository>/build/models.",
      "kuiper"};
  app.require_subcommand(1);

  ClassifyOptions classify;
  CLI::App* classify_cmd =
      app.add_subcommand("classify", "Classify an image with ResNet18 (ImageNet preprocessing)");
  classify_cmd->add_option("IMAGE", classify.image, "image file (PNG, JPEG, ...)")->required();
  classify_cmd->add_option(
      "--model", classify.model,
      "model folder or .pnnx.param (default: shapes_resnet18 when trained, else resnet18)");
  classify_cmd->add_option("--topk", classify.topk, "how many classes to print")
      ->capture_default_str();

  DetectOptions detect;
  CLI::App* detect_cmd = app.add_subcommand("detect", "Detect objects with YOLOv5s and draw them");
  detect_cmd->add_option("IMAGE", detect.image, "image file (PNG, JPEG, ...)")->required();
  detect_cmd->add_option(
      "--model", detect.model,
      "model folder or .pnnx.param (default: shapes_yolov5 when trained, else yolov5s)");
  detect_cmd->add_option("--conf", detect.conf, "keep boxes scoring above this")
      ->capture_default_str();
  detect_cmd->add_option("--iou", detect.iou, "NMS: drop boxes overlapping a better one by more")
      ->capture_default_str();
  detect_cmd->add_option("--max-det", detect.max_det, "keep at most this many, best first")
      ->capture_default_str();
  detect_cmd->add_option("--out", detect.out, "annotated image to write")->capture_default_str();

  RunOptions run;
  CLI::App* run_cmd = app.add_subcommand("run",
                                         "Run a PNNX or ONNX model on .npy inputs of the shapes it "
                                         "declares (dim 0 the batch where it has one)");
  run_cmd->add_option("MODEL", run.model, "model: .pnnx.param (its .pnnx.bin beside it) or .onnx")
      ->required();
  run_cmd->add_option("INPUT", run.inputs, "one .npy per model input")->required();
  run_cmd->add_option("-o,--output", run.outputs, "write output i to the i-th file (.npy)")
      ->allow_extra_args(false);
  run_cmd->add_option("--expect", run.expect, "compare output i with the i-th reference (.npy)")
      ->allow_extra_args(false);
  run_cmd
      ->add_option("--tolerance", run.tolerance,
                   "allowed max abs diff, times max(1, max abs of the reference)")
      ->capture_default_str();
  run_cmd->add_flag("--no-fuse", run.no_fuse,
                    "ONNX: convert YOLOv5's Detect head node by node, not fused into one layer");
  run_cmd
      ->add_option("--conv-route", run.conv_route,
                   "im2col: every convolution through the im2col route (lab 6's FillBlock), "
                   "and say how many took it; winograd-f4: the Winograd layers of up to 256x256 "
                   "channels on F(4x4, 3x3)")
      ->check(CLI::IsMember({"default", "im2col", "winograd-f4"}))
      ->capture_default_str();

  ConvertOptions convert;
  CLI::App* convert_cmd =
      app.add_subcommand("convert", "Import an ONNX model and save the engine graph as PNNX");
  convert_cmd->add_option("MODEL", convert.model, "the .onnx model")->required();
  convert_cmd->add_option("-o,--out", convert.out, "the .pnnx.param to write (.pnnx.bin beside it)")
      ->required();
  convert_cmd->add_flag(
      "--no-fuse", convert.no_fuse,
      "ONNX: convert YOLOv5's Detect head node by node, not fused into one layer");

  BenchOptions bench;
  CLI::App* bench_cmd =
      app.add_subcommand("bench", "Time a model: median and p90 latency per image");
  bench_cmd->add_option("MODEL", bench.model, "model name, folder or .pnnx.param")->required();
  bench_cmd->add_option("--batch", bench.batch, "images per forward pass")->capture_default_str();
  bench_cmd->add_option("--threads", bench.threads, "engine threads (0: every core)")
      ->capture_default_str();
  bench_cmd->add_option("--warmup", bench.warmup, "untimed runs first")->capture_default_str();
  bench_cmd->add_option("--runs", bench.runs, "timed runs")->capture_default_str();
  bench_cmd->add_flag("--profile", bench.profile, "print time per operator, slowest first");
  bench_cmd->add_flag("--no-fuse", bench.no_fuse,
                      "ONNX: convert YOLOv5's Detect head node by node, not fused into one layer");
  bench_cmd->add_flag("--no-plan", bench.no_plan,
                      "no activation memory plan: each operand owns its tensors");
  bench_cmd
      ->add_option("--conv-route", bench.conv_route,
                   "im2col: every convolution through the im2col route (lab 6's FillBlock), to "
                   "time your unfolding in the whole model; winograd-f4: the Winograd layers of up "
                   "to 256x256 channels on F(4x4, 3x3)")
      ->check(CLI::IsMember({"default", "im2col", "winograd-f4"}))
      ->capture_default_str();
  bench_cmd
      ->add_option("--versus", bench.versus,
                   "time this conv route against --conv-route: the model built for each, their "
                   "runs alternated, and the ratio of each pair of runs")
      ->check(CLI::IsMember({"default", "im2col", "winograd-f4"}));

  GraphOptions graph;
  CLI::App* graph_cmd =
      app.add_subcommand("graph", "Summarise a model's operators, or print Graphviz dot");
  graph_cmd->add_option("MODEL", graph.model, "model name, folder or .pnnx.param")->required();
  graph_cmd->add_flag("--dot", graph.dot, "print the graph in Graphviz dot");

  // Every subcommand loads a model, so every one takes the memory limit and
  // shows how the engine builds it.
  uint64_t max_memory = kuiper::kDefaultMemoryLimit;
  int verbose = 0;
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
    sub->add_flag("-v,--verbose", verbose,
                  "log how the graph is built on stderr: operators, each convolution's route, "
                  "the buffer plan (-vv: also each operator's time)");
    sub->add_option("--max-memory", max_memory,
                    "refuse a model or input whose shapes need more memory (bytes, or 512M, 8G)")
        ->transform(CLI::AsSizeValue(/*kb_is_1000=*/false))
        // The transform passes "-1" through, and the unsigned parse would wrap it.
        ->check([](const std::string& value) {
          return value.rfind('-', 0) == 0 ? "a size cannot be negative" : "";
        })
        ->capture_default_str();
  }

  // Declared after the loop above: it loads no model.
  OpsOptions ops;
  CLI::App* ops_cmd = app.add_subcommand(
      "ops", "List every PNNX layer type and every ONNX operator with its constraints");
  ops_cmd->add_flag("--markdown", ops.markdown, "print docs/operators.md");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    PrintError(UsageMessage(app, e, argc > 1 ? argv[1] : ""));
    return 2;
  }
  kuiper::SetMemoryLimit(max_memory);
  // The engine logs through glog's verbose levels; glog reads its own flags
  // (GLOG_v=2, ...) from the environment, and --verbose only raises the level.
  // A command's log belongs on its terminal, not in files under /tmp.
  FLAGS_logtostderr = true;
  FLAGS_v = std::max<int>(FLAGS_v, verbose);
  google::InitGoogleLogging(argv[0]);

  try {
    if (classify_cmd->parsed()) return Classify(classify);
    if (convert_cmd->parsed()) return Convert(convert);
    if (ops_cmd->parsed()) return Ops(ops);
    if (detect_cmd->parsed()) return Detect(detect);
    if (run_cmd->parsed()) return Run(run);
    if (bench_cmd->parsed()) return Bench(bench);
    if (graph_cmd->parsed()) return Graph(graph);
  } catch (const MismatchError& e) {
    PrintError(e.what());
    return kExitMismatch;
  } catch (const kuiper::UsageError& e) {
    PrintError(fmt::format("{} (see kuiper --help)", e.what()));
    return 2;
  } catch (const kuiper::ResourceError& e) {
    PrintError(fmt::format("{} (raise it with --max-memory)", e.what()));
    return 1;
  } catch (const std::exception& e) {
    // kuiper::Error says what and where; other exceptions (OpenCV, std) the same way.
    PrintError(e.what());
    return 1;
  }
  return 2;  // unreachable: require_subcommand(1)
}
