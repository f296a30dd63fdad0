#include "commands.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>  // malloc_trim
#endif

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <optional>

#include "kuiper/blas_threads.hpp"
#include "kuiper/error.hpp"
#include "kuiper/graph.hpp"
#include "kuiper/layer.hpp"
#include "kuiper/layers/convolution.hpp"
#include "kuiper/npy.hpp"
#include "kuiper/onnx_import.hpp"
#include "kuiper/parallel.hpp"
#include "metrics.hpp"
#include "model_files.hpp"
#include "postprocess.hpp"
#include "preprocess.hpp"

namespace kuiper::app {

namespace {

// The engine's options for a command: `conv_route` ("default", "im2col" or
// "winograd-f4", the default routes with RuntimeOptions::winograd_f4)
// and planning from its flags, and the CLI's allocator policy (main.cpp sets
// the rest of it): the raw weights Build frees go back to the system as it
// goes (glibc; elsewhere free() is trusted to), so loading a model does not
// hold two copies of them (docs/performance.md#graph-memory).
RuntimeOptions EngineOptions(const std::string& conv_route = "default", bool plan = true,
                             int threads = 0) {
  if (conv_route != "default" && conv_route != "im2col" && conv_route != "winograd-f4") {
    throw UsageError(
        fmt::format("--conv-route {}: expected default, im2col or winograd-f4", conv_route));
  }
  RuntimeOptions options;
  options.winograd_conv = options.direct_conv = conv_route != "im2col";
  options.winograd_f4 = conv_route == "winograd-f4";
  options.buffer_planning = plan;
  options.threads = threads;
#ifdef __GLIBC__
  options.weights_freed = [] { malloc_trim(0); };
#endif
  return options;
}

std::unique_ptr<RuntimeGraph> BuildGraph(const ModelFiles& files, const RuntimeOptions& options,
                                         bool no_fuse = false) {
  OnnxImportOptions onnx;
  onnx.fuse_detect_head = !no_fuse;
  auto graph = files.onnx.empty() ? std::make_unique<RuntimeGraph>(files.param, files.bin)
                                  : LoadOnnx(files.onnx, onnx);
  graph->Build(options);
  return graph;
}

// One line: how many of the graph's convolutions take each route, and how
// many of the Winograd ones run on F(4x4, 3x3) where any does.
std::string ConvRoutes(const RuntimeGraph& graph) {
  std::map<ConvRoute, int> count;
  int total = 0, f4 = 0;
  for (const auto& op : graph.operators()) {
    if (const auto* conv = dynamic_cast<const ConvolutionLayer*>(op->layer.get())) {
      ++count[conv->route()];
      ++total;
      f4 += conv->winograd_tile() == 4;
    }
  }
  std::vector<std::string> parts;
  for (const ConvRoute route :
       {ConvRoute::kIm2Col, ConvRoute::kInPlace, ConvRoute::kWinograd, ConvRoute::kDirect}) {
    const bool tiles = route == ConvRoute::kWinograd && f4 > 0;
    parts.push_back(fmt::format("{} {}{}", ConvRouteName(route), count[route],
                                tiles ? fmt::format(" ({} on F(4x4, 3x3))", f4) : ""));
  }
  return fmt::format("convolutions: {} ({}; im2col runs the lab's FillBlock)", total,
                     fmt::join(parts, ", "));
}

const std::vector<int>& InputShape(const RuntimeGraph& graph, const ModelFiles& files) {
  if (graph.input_operators().size() != 1) {
    throw Error(fmt::format("model {} has {} inputs; an image model has one", files.param,
                            graph.input_operators().size()));
  }
  return graph.input_operators()[0]->output_operand->shapes;
}

// The side of the square RGB image the model takes, from its input (1,3,S,S).
int SquareImageSide(const RuntimeGraph& graph, const ModelFiles& files) {
  const std::vector<int>& shape = InputShape(graph, files);
  if (shape.size() != 4 || shape[1] != 3 || shape[2] != shape[3] || shape[2] <= 0) {
    throw ShapeError(fmt::format("model {} takes input {}, not a batch of square RGB images",
                                 files.param, ShapeText(shape)));
  }
  return shape[2];
}

// The shapes of the operator's outputs as the model declares them, for the
// profile and graph tables: "(1,64,56,56)", one per output (torch.split has
// several), "-" for none.
std::string OutputShapesText(const RuntimeOperator& op) {
  if (op.output_operands.empty()) return "-";
  std::vector<std::string> shapes;
  for (const RuntimeOperand* operand : op.output_operands) {
    shapes.push_back(ShapeText(operand->shapes));
  }
  return fmt::format("{}", fmt::join(shapes, " "));
}

cv::Scalar ClassColour(int class_id) {
  // Hues spread by the golden angle, so neighbouring ids look different.
  cv::Mat hsv(1, 1, CV_8UC3, cv::Scalar((class_id * 47) % 180, 220, 230));
  cv::Mat bgr;
  cv::cvtColor(hsv, bgr, cv::COLOR_HSV2BGR);
  const cv::Vec3b c = bgr.at<cv::Vec3b>(0, 0);
  return {static_cast<double>(c[0]), static_cast<double>(c[1]), static_cast<double>(c[2])};
}

void DrawDetection(cv::Mat& bgr, const Detection& d, const std::string& label) {
  const int thickness =
      std::max(1, static_cast<int>(std::lround(std::max(bgr.rows, bgr.cols) / 400.0)));
  const cv::Scalar colour = ClassColour(d.class_id);
  const cv::Point top_left(static_cast<int>(d.box.x1), static_cast<int>(d.box.y1));
  cv::rectangle(bgr, top_left, cv::Point(static_cast<int>(d.box.x2), static_cast<int>(d.box.y2)),
                colour, thickness);
  const double font_scale = 0.4 * thickness;
  int baseline = 0;
  const cv::Size text =
      cv::getTextSize(label, cv::FONT_HERSHEY_SIMPLEX, font_scale, thickness, &baseline);
  // The label sits above the box, or inside it when the box touches the top.
  const int y =
      top_left.y - text.height - baseline >= 0 ? top_left.y : top_left.y + text.height + baseline;
  // It starts at the box's left edge, moved left when it would run past the image's right edge.
  const int x = std::max(0, std::min(top_left.x, bgr.cols - text.width));
  cv::rectangle(bgr, cv::Point(x, y - text.height - baseline), cv::Point(x + text.width, y), colour,
                cv::FILLED);
  cv::putText(bgr, label, cv::Point(x, y - baseline), cv::FONT_HERSHEY_SIMPLEX, font_scale,
              cv::Scalar(255, 255, 255), thickness, cv::LINE_AA);
}

// A progress line on stderr, rewritten in place with '\r', only when stderr is a
// terminal: scripts and tests that capture the output see just the results.
class ProgressLine {
 public:
  ProgressLine() : terminal_(isatty(fileno(stderr)) != 0) {}
  ~ProgressLine() { Clear(); }  // also when an error ends the work: its message gets a clean line

  template <typename... Args>
  void Show(fmt::format_string<Args...> format, Args&&... args) {
    if (!terminal_) return;
    fmt::print(stderr, "\r\033[K{}", fmt::format(format, std::forward<Args>(args)...));
    shown_ = true;
  }
  void Clear() {
    if (shown_) fmt::print(stderr, "\r\033[K");
    shown_ = false;
  }

 private:
  bool terminal_;
  bool shown_ = false;
};

std::string RequireExtension(const std::string& path, std::string_view extension,
                             std::string_view what) {
  if (std::filesystem::path(path).extension() != extension) {
    throw Error(fmt::format("{} '{}' must be a {} file", what, path, extension));
  }
  return path;
}

}  // namespace

int Classify(const ClassifyOptions& options) {
  if (options.topk < 1) throw UsageError(fmt::format("--topk {} is not at least 1", options.topk));
  const cv::Mat rgb = LoadRgbImage(options.image);
  const ModelFiles files = ResolveModelOr(options.model, {kShapesClassifier, "resnet18"});
  std::unique_ptr<RuntimeGraph> graph = BuildGraph(files, EngineOptions());
  const int crop = SquareImageSide(*graph, files);
  const std::vector<sftensor> output =
      graph->Forward(std::vector<sftensor>{ClassifyInput(rgb, crop)});
  const std::vector<float> probabilities = Softmax(output.at(0)->values());
  const std::vector<std::string> labels = LabelsBeside(files, "imagenet_classes.txt");

  fmt::print("{} ({}x{}): {} (input {}x{})\n", options.image, rgb.cols, rgb.rows, files.param, crop,
             crop);
  fmt::print("{}\n", WeightsNote(files));
  fmt::print("{:>4}  {:>5}  {:<32} {:>11}\n", "rank", "class", "name", "probability");
  int rank = 1;
  for (const Ranked& r : TopK(probabilities, static_cast<size_t>(options.topk))) {
    fmt::print("{:>4}  {:>5}  {:<32} {:>11.6f}\n", rank++, r.index, LabelOf(labels, r.index),
               r.value);
  }
  return 0;
}

int Detect(const DetectOptions& options) {
  if (!(options.conf >= 0 && options.conf <= 1) || !(options.iou >= 0 && options.iou <= 1)) {
    throw UsageError(
        fmt::format("--conf {} and --iou {} must lie in [0, 1]", options.conf, options.iou));
  }
  if (options.max_det < 1) {
    throw UsageError(fmt::format("--max-det {} is not at least 1", options.max_det));
  }
  if (!cv::haveImageWriter(options.out)) {
    throw Error(
        fmt::format("cannot write an image named '{}': use .jpg, .png or .bmp", options.out));
  }
  const cv::Mat rgb = LoadRgbImage(options.image);
  const ModelFiles files = ResolveModelOr(options.model, {kShapesDetector, "yolov5s"});
  std::unique_ptr<RuntimeGraph> graph = BuildGraph(files, EngineOptions());
  const int side = SquareImageSide(*graph, files);
  const Letterboxed boxed = Letterbox(rgb, side);
  const std::vector<sftensor> output =
      graph->Forward(std::vector<sftensor>{RgbToTensor(boxed.image)});
  const sftensor& rows = output.at(0);
  if (rows->raw_shapes().size() != 2) {
    throw ShapeError(
        fmt::format("model {} gives output {} per image, expected (boxes, 5 + classes)",
                    files.param, ShapeText(rows->raw_shapes())));
  }
  std::vector<Detection> detections =
      Nms(DecodeYolo(rows->values(), rows->raw_shapes()[1], options.conf), options.iou);
  if (detections.size() > static_cast<size_t>(options.max_det)) detections.resize(options.max_det);
  const std::vector<std::string> labels = LabelsBeside(files, "coco_classes.txt");

  cv::Mat canvas;
  cv::cvtColor(rgb, canvas, cv::COLOR_RGB2BGR);
  fmt::print("{} ({}x{}): {} (letterbox {}: scale {:.4f}, pad left {}, top {})\n", options.image,
             rgb.cols, rgb.rows, files.param, side, boxed.scale, boxed.pad_left, boxed.pad_top);
  fmt::print("{}\n", WeightsNote(files));
  fmt::print("{} detection(s) with score > {} after NMS at IoU {} (at most {})\n",
             detections.size(), options.conf, options.iou, options.max_det);
  if (!detections.empty()) {
    fmt::print("{:<16} {:>6} {:>8} {:>8} {:>8} {:>8}\n", "class", "score", "x1", "y1", "x2", "y2");
  }
  for (Detection& d : detections) {
    d.box = UnLetterbox(d.box, boxed.scale, boxed.pad_left, boxed.pad_top, rgb.cols, rgb.rows);
    const std::string name = LabelOf(labels, d.class_id);
    fmt::print("{:<16} {:>6.3f} {:>8.1f} {:>8.1f} {:>8.1f} {:>8.1f}\n", name, d.score, d.box.x1,
               d.box.y1, d.box.x2, d.box.y2);
    DrawDetection(canvas, d, fmt::format("{} {:.2f}", name, d.score));
  }
  bool written = false;
  try {
    written = cv::imwrite(options.out, canvas);
  } catch (const cv::Exception& e) {
    throw Error(fmt::format("cannot write '{}': {}", options.out, e.err));
  }
  if (!written) throw Error(fmt::format("cannot write '{}'", options.out));
  fmt::print("wrote {}\n", options.out);
  return 0;
}

int Run(const RunOptions& options) {
  const RuntimeOptions engine = EngineOptions(options.conv_route);
  const ModelFiles files = ResolveModel(options.model);
  // The file messages name: an ONNX model has no .pnnx.param.
  const std::string& model_file = files.onnx.empty() ? files.param : files.onnx;
  for (const std::string& path : options.inputs) RequireExtension(path, ".npy", "input");
  for (const std::string& path : options.outputs) RequireExtension(path, ".npy", "output");
  for (const std::string& path : options.expect) RequireExtension(path, ".npy", "reference");
  if (!(options.tolerance >= 0)) {
    throw UsageError(fmt::format("--tolerance {} is not >= 0", options.tolerance));
  }
  std::vector<NpyArray> arrays;
  for (const std::string& path : options.inputs) arrays.push_back(LoadNpy(path));
  std::vector<NpyArray> references;
  for (const std::string& path : options.expect) references.push_back(LoadNpy(path));

  // An ONNX model gets the arrays at import: a graph input that an operator
  // needs as a constant (weights, a shape, Slice's starts, ...) is bound from
  // its array there and leaves the engine graph (OnnxImportOptions).
  std::vector<size_t> runtime_arrays;  // the arrays the engine graph's inputs take, in order
  std::unique_ptr<RuntimeGraph> graph;
  if (files.onnx.empty()) {
    graph = BuildGraph(files, engine);
    for (size_t i = 0; i < arrays.size(); ++i) runtime_arrays.push_back(i);
  } else {
    const std::vector<std::string> names = OnnxGraphInputs(ReadOnnxModel(files.onnx));
    if (arrays.size() != names.size()) {
      throw Error(fmt::format("model {} has {} input(s), got {} .npy file(s)", model_file,
                              names.size(), arrays.size()));
    }
    OnnxImportOptions import;
    import.fuse_detect_head = !options.no_fuse;
    for (size_t i = 0; i < names.size(); ++i) import.input_values[names[i]] = arrays[i];
    std::vector<std::string> bound;
    graph = LoadOnnx(files.onnx, import, &bound);
    graph->Build(engine);
    std::vector<std::string> bound_text;
    for (size_t i = 0; i < names.size(); ++i) {
      if (std::find(bound.begin(), bound.end(), names[i]) == bound.end()) {
        runtime_arrays.push_back(i);
      } else {
        bound_text.push_back(fmt::format("'{}' ({})", names[i], options.inputs[i]));
      }
    }
    if (!bound_text.empty()) {
      fmt::print("bound at load time (the graph is specialised for their values): {}\n",
                 fmt::join(bound_text, ", "));
    }
  }
  const auto& input_ops = graph->input_operators();
  const auto& output_ops = graph->output_operators();
  if (runtime_arrays.size() != input_ops.size()) {
    throw Error(fmt::format("model {} has {} input(s), got {} .npy file(s)", model_file,
                            input_ops.size(), runtime_arrays.size()));
  }
  // Each array as the model declares its input: with a batch axis only where
  // the model has one (ArrayToInput, kuiper/npy.hpp).
  std::vector<std::vector<sftensor>> inputs;
  for (size_t i = 0; i < runtime_arrays.size(); ++i) {
    const size_t a = runtime_arrays[i];
    inputs.push_back(ArrayToInput(arrays[a], *input_ops[i]->output_operand,
                                  fmt::format("{} ({})", input_ops[i]->name, options.inputs[a])));
  }
  for (const auto* list : {&options.outputs, &options.expect}) {
    if (!list->empty() && list->size() != output_ops.size()) {
      throw Error(fmt::format("model {} has {} output(s): give as many -o / --expect files, got {}",
                              model_file, output_ops.size(), list->size()));
    }
  }
  const auto start = std::chrono::steady_clock::now();
  const std::vector<std::vector<sftensor>> outputs = graph->Forward(inputs);
  const std::chrono::duration<double, std::milli> elapsed =
      std::chrono::steady_clock::now() - start;
  // No run-time input (every one bound at load time): the graph is one item of constants.
  fmt::print("{}: batch {}, forward {:.1f} ms\n", model_file, inputs.empty() ? 1 : inputs[0].size(),
             elapsed.count());
  if (options.conv_route != "default") fmt::print("{}\n", ConvRoutes(*graph));

  std::vector<std::string> mismatches;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const std::vector<RuntimeOperand*>& read = output_ops[i]->input_operands;
    const NpyArray result =
        read.size() == 1 ? OutputToArray(outputs[i], *read[0]) : BatchToNpy(outputs[i]);
    fmt::print("output {} ('{}'): shape {}\n", i, output_ops[i]->name, ShapeText(result.shape));
    if (!options.outputs.empty()) {
      SaveNpy(options.outputs[i], result);
      fmt::print("  wrote {}\n", options.outputs[i]);
    }
    if (options.expect.empty()) continue;
    const NpyArray& reference = references[i];
    if (reference.shape != result.shape) {
      mismatches.push_back(fmt::format("output {} has shape {}, the reference {} has {}", i,
                                       ShapeText(result.shape), options.expect[i],
                                       ShapeText(reference.shape)));
      fmt::print("  vs {}: shape differs, {}\n", options.expect[i], ShapeText(reference.shape));
      continue;
    }
    const float diff = MaxAbsDiff(result.data, reference.data);
    const float max_ref = MaxAbs(reference.data);
    const float allowed = options.tolerance * std::max(1.f, max_ref);
    const bool ok = diff <= allowed;  // false for NaN
    fmt::print("  vs {}: max abs diff {:.3g}, max abs of reference {:.4g}, allowed {:.3g}: {}\n",
               options.expect[i], diff, max_ref, allowed, ok ? "ok" : "MISMATCH");
    if (!ok) {
      mismatches.push_back(fmt::format("output {} differs from {} by {:.3g} > {:.3g}", i,
                                       options.expect[i], diff, allowed));
    }
  }
  if (!mismatches.empty()) throw MismatchError(fmt::format("{}", fmt::join(mismatches, "; ")));
  return 0;
}

int Bench(const BenchOptions& options) {
  if (options.batch < 1 || options.runs < 1 || options.warmup < 0 || options.threads < 0) {
    throw UsageError(
        fmt::format("--batch {} and --runs {} must be >= 1, --warmup {} and --threads {} >= 0",
                    options.batch, options.runs, options.warmup, options.threads));
  }
  // The engine's own threads (parallel.hpp); oneDNN's GEMM and OpenBLAS
  // (under Armadillo) run single-threaded inside them.
  if (options.threads > 0) SetMaxThreads(options.threads);
  if (!options.versus.empty() && options.profile) {
    throw UsageError("--profile times one graph: give it without --versus");
  }
  const RuntimeOptions engine =
      EngineOptions(options.conv_route, !options.no_plan, options.threads);
  const ModelFiles files = ResolveModel(options.model);
  std::unique_ptr<RuntimeGraph> graph = BuildGraph(files, engine, options.no_fuse);
  // --versus: the same model built for the other route, timed in turn with
  // the first. Runs minutes apart on a shared machine differ by more than a
  // route does (docs/performance.md#paired-runs); two runs in a row see the
  // same machine, and the order inside each pair alternates.
  std::unique_ptr<RuntimeGraph> versus;
  if (!options.versus.empty()) {
    versus = BuildGraph(files, EngineOptions(options.versus, !options.no_plan, options.threads),
                        options.no_fuse);
  }
  // Random inputs of the annotated shapes: timing does not depend on values.
  arma::arma_rng::set_seed(0);
  std::vector<std::vector<sftensor>> inputs;
  for (const RuntimeOperator* input : graph->input_operators()) {
    const std::vector<uint32_t> shape = BatchItemShape(input->output_operand->shapes);
    std::vector<sftensor> batch;
    for (int i = 0; i < options.batch; ++i) {
      batch.push_back(TensorCreate(shape));
      batch.back()->Rand();
    }
    inputs.push_back(std::move(batch));
  }
  ProgressLine progress;
  for (int i = 0; i < options.warmup; ++i) {
    progress.Show("bench: warm-up run {}/{}", i + 1, options.warmup);
    graph->Forward(inputs);
    if (versus) versus->Forward(inputs);
  }

  std::map<const RuntimeOperator*, double> operator_ms;
  if (options.profile) {
    graph->set_profiler([&](const RuntimeOperator& op, double ms) { operator_ms[&op] += ms; });
  }
  const auto image_ms = [&](RuntimeGraph& timed) {
    const auto start = std::chrono::steady_clock::now();
    timed.Forward(inputs);
    const std::chrono::duration<double, std::milli> elapsed =
        std::chrono::steady_clock::now() - start;
    return elapsed.count() / options.batch;
  };
  std::vector<double> per_image_ms, versus_ms;
  for (int i = 0; i < options.runs; ++i) {
    if (i == 0) {
      progress.Show("bench: timed run 1/{}", options.runs);
    } else {
      progress.Show("bench: timed run {}/{} (last {:.1f} ms per image)", i + 1, options.runs,
                    per_image_ms.back());
    }
    if (versus && i % 2 == 1) versus_ms.push_back(image_ms(*versus));
    per_image_ms.push_back(image_ms(*graph));
    if (versus && i % 2 == 0) versus_ms.push_back(image_ms(*versus));
  }
  graph->set_profiler(nullptr);
  progress.Clear();

  fmt::print("{}: batch {}, {} thread(s), {} OpenBLAS thread(s), {} warm-up + {} timed run(s)\n",
             files.param, options.batch, MaxThreads(), BlasThreads(), options.warmup, options.runs);
  fmt::print("per image: median {:.3f} ms, p90 {:.3f} ms (min {:.3f} ms)\n",
             Quantile(per_image_ms, 0.5), Quantile(per_image_ms, 0.9), Quantile(per_image_ms, 0.0));
  if (graph->buffer_planning()) {
    fmt::print("activations: {:.1f} MB planned buffer, shared by operands not live at once\n",
               graph->planned_bytes() / 1e6);
  } else {
    fmt::print("activations: not planned (--no-plan), each operand owns its tensors\n");
  }
  fmt::print("{}\n", ConvRoutes(*graph));
  if (versus) {
    std::vector<double> ratios;
    for (int i = 0; i < options.runs; ++i) ratios.push_back(versus_ms[i] / per_image_ms[i]);
    fmt::print("versus --conv-route {}: median {:.3f} ms, p90 {:.3f} ms (min {:.3f} ms)\n",
               options.versus, Quantile(versus_ms, 0.5), Quantile(versus_ms, 0.9),
               Quantile(versus_ms, 0.0));
    fmt::print("{}\n", ConvRoutes(*versus));
    fmt::print("{} / {}, per pair of runs: median {:.3f} (quartiles {:.3f}-{:.3f})\n",
               options.versus, options.conv_route, Quantile(ratios, 0.5), Quantile(ratios, 0.25),
               Quantile(ratios, 0.75));
  }
  if (!options.profile) return 0;

  std::vector<std::pair<const RuntimeOperator*, double>> rows(operator_ms.begin(),
                                                              operator_ms.end());
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first->index < b.first->index;
  });
  double total = 0;
  for (const auto& [op, ms] : rows) total += ms;
  fmt::print("\nper operator, mean ms per run of batch {} ({} operators, {:.3f} ms in layers):\n",
             options.batch, rows.size(), total / options.runs);
  fmt::print("{:<20} {:<28} {:<20} {:>10} {:>8}\n", "type", "name", "output shape", "time ms",
             "share %");
  for (const auto& [op, ms] : rows) {
    fmt::print("{:<20} {:<28} {:<20} {:>10.3f} {:>8.2f}\n", op->type, op->name,
               OutputShapesText(*op), ms / options.runs, total > 0 ? 100 * ms / total : 0.0);
  }
  return 0;
}

namespace {

int64_t ParameterCount(const RuntimeOperator& op) {
  int64_t count = 0;
  for (const auto& [name, attribute] : op.attribute) {
    int64_t elements = 1;
    for (int d : attribute.shape) elements *= d;
    count += elements;
  }
  return count;
}

// A dot identifier in quotes, with quotes and backslashes escaped and each newline
// written as dot's \n, so a label breaks into lines instead of showing a backslash.
std::string DotQuote(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '\n') {  // Graphviz's line break inside a label
      out += "\\n";
      continue;
    }
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace

int Graph(const GraphOptions& options) {
  const ModelFiles files = ResolveModel(options.model, /*need_bin=*/false);
  if (!files.onnx.empty()) {
    throw Error(
        fmt::format("graph reads PNNX models: first run `kuiper convert {} -o {}.pnnx.param`",
                    files.onnx, files.name));
  }
  // The structure is enough: attributes keep their shapes without their data.
  RuntimeGraph graph(files.param, "");
  graph.Init();
  const std::vector<RuntimeOperator*> order = graph.ReverseTopo();

  if (options.dot) {
    fmt::print("digraph {} {{\n  node [shape=box, fontname=\"monospace\", fontsize=10];\n",
               DotQuote(files.name));
    for (const RuntimeOperator* op : order) {
      fmt::print("  {} [label={}];\n", DotQuote(op->name),
                 DotQuote(fmt::format("{}\n{}\n{}", op->type, op->name, OutputShapesText(*op))));
    }
    for (const RuntimeOperator* op : order) {
      for (const RuntimeOperator* next : op->output_operators) {
        fmt::print("  {} -> {};\n", DotQuote(op->name), DotQuote(next->name));
      }
    }
    fmt::print("}}\n");
    return 0;
  }

  std::map<std::string, std::pair<int, int64_t>> by_type;  // type -> (operators, parameters)
  int64_t total = 0;
  fmt::print("{}\n{:>4}  {:<20} {:<28} {:<20} {:>12}\n", files.param, "#", "type", "name",
             "output shape", "parameters");
  int position = 0;
  for (const RuntimeOperator* op : order) {
    const int64_t count = ParameterCount(*op);
    total += count;
    by_type[op->type].first += 1;
    by_type[op->type].second += count;
    fmt::print("{:>4}  {:<20} {:<28} {:<20} {:>12}\n", position++, op->type, op->name,
               OutputShapesText(*op), count);
  }
  fmt::print("\n{} operators, {} parameters ({:.2f} M)\n", order.size(), total, total / 1e6);
  fmt::print("{:<20} {:>9} {:>12}\n", "type", "operators", "parameters");
  for (const auto& [type, stats] : by_type) {
    fmt::print("{:<20} {:>9} {:>12}\n", type, stats.first, stats.second);
  }
  return 0;
}

int Ops(const OpsOptions& options) {
  const std::vector<std::string> layers = LayerRegisterer::Types();
  const std::vector<OnnxOperatorInfo> onnx = OnnxOperators();
  if (!options.markdown) {
    fmt::print("PNNX layer types ({}):\n", layers.size());
    for (const std::string& type : layers) fmt::print("  {}\n", type);
    fmt::print("ONNX operators ({}):\n", onnx.size());
    for (const OnnxOperatorInfo& op : onnx) fmt::print("  {:<20} {}\n", op.type, op.constraints);
    return 0;
  }
  fmt::print(
      "# Operators\n\n"
      "Generated by `kuiper ops --markdown` (scripts/operators_doc.sh): do not edit by hand. "
      "Each layer registers its PNNX types beside its code (kuiper/src/layer/), each ONNX "
      "lowering its op types and constraints beside its code (onnx/src/lower_*.cpp); the "
      "unary functions of both come from one table, kuiper/include/kuiper/unary_ops.def.\n\n"
      "## PNNX layer types ({})\n\n",
      layers.size());
  for (const std::string& type : layers) fmt::print("- `{}`\n", type);
  fmt::print("\n## ONNX operators ({}, default domain)\n\n| op | constraints |\n|---|---|\n",
             onnx.size());
  for (const OnnxOperatorInfo& op : onnx) fmt::print("| {} | {} |\n", op.type, op.constraints);
  return 0;
}

int Convert(const ConvertOptions& options) {
  RequireExtension(options.model, ".onnx", "model");
  const std::string suffix = ".pnnx.param";
  if (options.out.size() <= suffix.size() ||
      options.out.compare(options.out.size() - suffix.size(), suffix.size(), suffix) != 0) {
    throw Error(fmt::format("output '{}' must be a .pnnx.param file", options.out));
  }
  const std::string bin =
      options.out.substr(0, options.out.size() - std::string(".param").size()) + ".bin";
  OnnxImportOptions onnx;
  onnx.fuse_detect_head = !options.no_fuse;
  ConvertOnnxToPnnx(options.model, options.out, bin, onnx);
  fmt::print("wrote {} and {}\n", options.out, bin);
  return 0;
}

}  // namespace kuiper::app
