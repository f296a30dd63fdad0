// The ONNX importer: turns an ONNX model into the engine's PNNX graph, so it
// runs on the engine (RuntimeGraph) or is saved as .pnnx.param/.pnnx.bin.
//
//   std::unique_ptr<RuntimeGraph> graph = LoadOnnx("model.onnx");
//   graph->Build();
//   std::vector<sftensor> out = graph->Forward(batch);
//
// Ordinary nodes map one to one onto engine operators; MatMul is lowered to
// dense (nn.Linear / F.linear), reshapes and batch matmul (torch.matmul), and
// Upsample/Resize to kuiper.Resize. docs/onnx.md describes every mapping and
// how the engine's batch dimension is chosen.
#pragma once

#include <onnx/onnx_pb.h>

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kuiper/error.hpp"
#include "kuiper/graph.hpp"
#include "kuiper/npy.hpp"
#include "kuiper/pnnx.hpp"
#include "kuiper/tensor.hpp"

namespace kuiper {

// A model that cannot be converted: its message names the node (or value) and
// says what was expected.
class ConversionError : public Error {
 public:
  using Error::Error;
};

// A model holding operator types the importer does not know; the message lists
// every such type with the names of its nodes, all at once.
class UnsupportedOperatorError : public ConversionError {
 public:
  using ConversionError::ConversionError;
};

// The ONNX operator types (default domain) the importer converts, sorted.
std::vector<std::string> SupportedOnnxOperators();

// An operator type the importer converts and what it accepts (one line, e.g.
// "2-D (4-D input and W); W and B constant; ..."), as registered with its lowering.
struct OnnxOperatorInfo {
  std::string type;
  std::string constraints;
};
// Every supported operator with its constraints, sorted by type.
std::vector<OnnxOperatorInfo> OnnxOperators();

// Reads an ONNX file (throws ParseError when it is not one).
onnx::ModelProto ReadOnnxModel(const std::string& path);
// The same from the file's bytes in memory; `name` stands for the file in messages.
onnx::ModelProto ParseOnnxModel(std::string_view bytes, const std::string& name);

// Load-time inputs. The engine fixes shapes and weights when it builds the
// graph (TensorRT calls such inputs shape tensors), so a graph input that an
// operator needs as a constant (a Conv's weights, a Reshape's shape, a Slice's
// starts, Resize's scales or sizes, Clip's min/max, ...) can only be given
// when the model is imported. `input_values` holds the values the user has
// for graph inputs, by name (`kuiper run model.onnx a.npy b.npy` reads its
// arrays first). An input some operator needs as a constant, and only such
// an input, is bound from its value: it becomes an initializer, the graph is
// specialised for it and it leaves the engine graph's inputs. Every other
// input stays a run-time input (its value here is not used). Without a value
// such an input stops the import, naming it.
struct OnnxImportOptions {
  std::map<std::string, NpyArray> input_values;
  // A YOLOv5 Detect head of exactly the traced form (onnx/src/detect_head.cpp)
  // becomes one fused models.yolo.Detect operator per level, which is faster.
  // false, or a head of any other form, is converted node by node like the
  // rest of the graph; both give the same output (onnx/test/test_detect_head.cpp).
  bool fuse_detect_head = true;
};

// The names of the model's graph inputs that are not initializers, in order:
// the values `kuiper run` takes, one .npy file each.
std::vector<std::string> OnnxGraphInputs(const onnx::ModelProto& model);

// Converts a model. Throws UnsupportedOperatorError or ConversionError. When
// `bound_inputs` is given, it receives the names of the graph inputs bound at
// load time (OnnxImportOptions), in graph order; the engine graph's inputs are
// the others, in graph order.
pnnx::Graph ConvertOnnx(const onnx::ModelProto& model, const OnnxImportOptions& options = {},
                        std::vector<std::string>* bound_inputs = nullptr);

// ReadOnnxModel then ConvertOnnx, in a RuntimeGraph named after the file
// (not built yet: call Build()).
std::unique_ptr<RuntimeGraph> LoadOnnx(const std::string& onnx_path,
                                       const OnnxImportOptions& options = {},
                                       std::vector<std::string>* bound_inputs = nullptr);

// Converts and saves as PNNX. An empty bin_path is param_path with its
// ".param" suffix replaced by ".bin" (or ".bin" appended).
void ConvertOnnxToPnnx(const std::string& onnx_path, const std::string& param_path,
                       const std::string& bin_path = "", const OnnxImportOptions& options = {});

// Row-major values of an ONNX float tensor (float_data or raw_data). Throws
// ConversionError for other element types.
std::vector<float> OnnxTensorFloats(const onnx::TensorProto& tensor);

// An ONNX tensor as the array `kuiper run` would read from its .npy: float
// and double as floats, integer and bool types exactly in `ints` too. Throws
// ConversionError for other element types (float16, strings, ...).
NpyArray OnnxTensorToArray(const onnx::TensorProto& tensor);

// Splits row-major `values` into the batch of an engine operand of shape
// `shape` (batch first): shape[0] items of shape[1..]. Throws ShapeError when
// the counts do not match.
std::vector<sftensor> ValuesToBatch(const std::vector<float>& values,
                                    const std::vector<int>& shape);

// The row-major values of a batch, item after item.
std::vector<float> BatchToValues(const std::vector<sftensor>& batch);

}  // namespace kuiper
