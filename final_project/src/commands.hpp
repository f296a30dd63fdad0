// The `kuiper` subcommands. Each takes its parsed options, prints its report
// on stdout and returns the exit status; errors are thrown (kuiper::Error) for
// main to print on one line.
#pragma once

#include <string>
#include <vector>

#include "kuiper/error.hpp"

namespace kuiper::app {

// Exit status of `kuiper run --expect` when an output is beyond the tolerance.
inline constexpr int kExitMismatch = 3;

// An output that does not match its reference (`kuiper run --expect`).
class MismatchError : public Error {
 public:
  using Error::Error;
};

struct ClassifyOptions {
  std::string image;
  std::string model;  // empty: shapes_resnet18 if trained, else the generated resnet18
  int topk = 5;
};
int Classify(const ClassifyOptions& options);

struct DetectOptions {
  std::string image;
  std::string model;  // empty: shapes_yolov5 if trained, else the generated yolov5s
  float conf = 0.25f;
  float iou = 0.45f;
  int max_det = 300;  // YOLOv5's cap on detections per image, best first
  std::string out = "out.jpg";
};
int Detect(const DetectOptions& options);

struct RunOptions {
  std::string model;
  std::vector<std::string> inputs;   // one .npy per graph input, in file order
  std::vector<std::string> outputs;  // one .npy per graph output, or none
  std::vector<std::string> expect;   // one reference .npy per graph output, or none
  float tolerance = 1e-4f;
  bool no_fuse = false;                // ONNX: convert the YOLOv5 Detect head node by node
  std::string conv_route = "default";  // see BenchOptions
};
int Run(const RunOptions& options);

// kuiper convert MODEL.onnx -o OUT.pnnx.param: the ONNX importer's engine graph,
// saved as PNNX (OUT.pnnx.bin beside it).
struct ConvertOptions {
  std::string model;
  std::string out;
  bool no_fuse = false;
};
int Convert(const ConvertOptions& options);

struct OpsOptions {
  bool markdown = false;  // docs/operators.md, as scripts/operators_doc.sh checks it
};
// Lists every PNNX layer type and every ONNX operator with its constraints.
int Ops(const OpsOptions& options);

struct BenchOptions {
  std::string model;
  int batch = 1;
  int threads = 0;  // 0: OpenMP's default
  int warmup = 2;
  int runs = 10;
  bool profile = false;
  bool no_fuse = false;
  bool no_plan = false;  // each operand owns its tensors (RuntimeOptions::buffer_planning off)
  // "default": each convolution takes the engine's route for its shape
  // (Winograd, direct or im2col); "im2col": every one takes the im2col route,
  // the lab's FillBlock (1x1 stride-1 layers need no unfolding).
  std::string conv_route = "default";
  // Another conv route to time against conv_route, the same model built twice
  // and the two run in turn: see Bench.
  std::string versus;
};
int Bench(const BenchOptions& options);

struct GraphOptions {
  std::string model;
  bool dot = false;
};
int Graph(const GraphOptions& options);

}  // namespace kuiper::app
