// The engine's view of a PNNX graph: operators with typed parameters and
// weights, connected through operands that carry one tensor per batch item.
//
// An operator has any number of output operands (pnnx writes torch.chunk,
// torch.split and torch.tensor_split as one operator with k outputs; the ONNX
// importer emits ONNX Split the same way). Each output operand has exactly one
// producer; the graph allocates every output, and a layer fills all of them
// (Layer::Forward, layer.hpp).
#pragma once

#include <fmt/format.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "kuiper/error.hpp"
#include "kuiper/pnnx.hpp"
#include "kuiper/runtime_options.hpp"
#include "kuiper/tensor.hpp"

namespace kuiper {

class Layer;

// One parameter of an operator, such as kernel_size=(3,3) or eps=1e-05.
// std::monostate stands for PNNX's None.
using RuntimeParameter =
    std::variant<std::monostate, bool, int, float, std::string, std::vector<int>,
                 std::vector<float>, std::vector<std::string>>;

// The name of the type a RuntimeParameter holds ("int", "float array", ...).
std::string ParameterTypeName(const RuntimeParameter& parameter);

// Weights of an operator (@weight=(64,3,7,7)f32): type, shape and raw
// row-major bytes. RuntimeGraph::InitGraphAttrs stores every attribute of a
// loaded graph as float32 (type kF32), whatever the file holds; ToFloat()
// gives its elements.
using RuntimeAttribute = pnnx::Attribute;

// A tensor flowing between operators. shapes is the annotated shape including
// the batch dimension (-1 where unknown; `?` in PNNX), 2 to 8 dimensions;
// datas holds one tensor per batch item, of shapes[1..] (up to 7 dimensions:
// tensor.hpp says how an item beyond 3-D is stored). Only the batch may be
// unknown in a graph input: the graph then runs at the batch it is given.
struct RuntimeOperand {
  std::string name;
  std::vector<int> shapes;
  pnnx::DataType type = pnnx::DataType::kNull;
  std::vector<sftensor> datas;
  // Set when the model declares this value without a batch axis: its shape as
  // the model file gives it (an ONNX graph converted as one batch item, e.g. a
  // MatMul input (3,4), held by the engine as `shapes` (1,3,4); a scalar is ()).
  // Unset: dimension 0 of `shapes` is the batch, as in every PNNX file. Callers
  // that feed arrays (io/npy.hpp ArrayToInput) check inputs against it.
  std::optional<std::vector<int>> unbatched_shape;
};

struct RuntimeOperator {
  std::string type;  // PNNX type, e.g. "nn.Conv2d"
  std::string name;  // unique name, e.g. "layer1.0.conv1"
  int index = 0;     // line position in the .pnnx.param file, for stable ordering

  // Operands in input order; owned by the graph.
  std::vector<RuntimeOperand*> input_operands;
  // Outputs in the order of the line; empty for pnnx.Output, which produces
  // nothing. Owned by the graph.
  std::vector<RuntimeOperand*> output_operands;
  // output_operands[0], or nullptr when there is none: the one output of the
  // usual single-output operator, kept for the code (and the labs' tests) that
  // reads it.
  RuntimeOperand* output_operand = nullptr;
  // Operators producing this one's inputs, and consuming its outputs; each
  // listed once, in file order. Edges of the graph, owned by the graph.
  std::vector<RuntimeOperator*> input_operators;
  std::vector<RuntimeOperator*> output_operators;

  std::map<std::string, RuntimeParameter> params;
  std::map<std::string, RuntimeAttribute> attribute;
  // The options the graph is built with (RuntimeGraph::Build sets them before
  // it creates the layer): a creator reads what applies to its layer, as the
  // convolution reads its routes. An operator made by hand has the defaults.
  RuntimeOptions options;
  std::unique_ptr<Layer> layer;

  RuntimeOperator();
  ~RuntimeOperator();
  RuntimeOperator(RuntimeOperator&&) noexcept;
  RuntimeOperator& operator=(RuntimeOperator&&) noexcept;

  bool has_param(const std::string& key) const { return params.count(key) != 0; }

  // The parameter `key` as a T; throws LayerError naming this operator when it
  // is missing or holds another type. An int is accepted where a float is asked.
  template <typename T>
  T param(const std::string& key) const {
    const auto it = params.find(key);
    if (it == params.end()) {
      throw LayerError(
          fmt::format("operator '{}' ({}): parameter '{}' is missing", name, type, key));
    }
    if (const T* value = std::get_if<T>(&it->second)) return *value;
    if constexpr (std::is_same_v<T, float>) {
      if (const int* value = std::get_if<int>(&it->second)) return static_cast<float>(*value);
    }
    throw LayerError(fmt::format("operator '{}' ({}): parameter '{}' is {}, expected {}", name,
                                 type, key, ParameterTypeName(it->second),
                                 ParameterTypeName(RuntimeParameter(T{}))));
  }

  // The attribute `key`; throws LayerError naming this operator when missing.
  const RuntimeAttribute& attr(const std::string& key) const;
};

}  // namespace kuiper
