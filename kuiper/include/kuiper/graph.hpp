// RuntimeGraph: loads a PNNX model, orders its operators and runs them.
//
//   RuntimeGraph graph("resnet18.pnnx.param", "resnet18.pnnx.bin");
//   graph.Init();   // read the files: operators, operands, parameters, weights, edges
//   graph.Build();  // order the operators, create their layers, allocate outputs
//   std::vector<sftensor> out = graph.Forward(batch);
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "kuiper/pnnx.hpp"
#include "kuiper/runtime.hpp"

namespace kuiper {

enum class TopoAlgorithm {
  kReverseDfs,  // depth-first post-order, reversed (core; the default)
  kKahn,        // in-degree queue (lab course4_topo)
};

class RuntimeGraph {
 public:
  // An empty bin_path loads the structure only: attributes keep their type and
  // shape but no data. Enough to inspect or order a graph, not to run it.
  RuntimeGraph(std::string param_path, std::string bin_path);
  // A graph already in memory (e.g. converted from ONNX); Init() takes it
  // instead of reading files. `name` stands for the file in error messages.
  RuntimeGraph(pnnx::Graph graph, std::string name);
  ~RuntimeGraph();

  // Reads the files and builds operators, operands, parameters, attributes
  // and the producer/consumer edges. Throws ParseError for malformed files and
  // GraphError for operators whose output is never used.
  void Init();
  // Like Init, but skips parameters and attributes: the operators, operands
  // and edges only. Enough to order or draw a graph, and it does not need the
  // course3 lab.
  void InitTopology();

  // Orders the operators, creates every layer (reporting all unknown types at
  // once) with the routes `options` allows, fuses every ReLU or SiLU whose
  // input only it reads into the layer producing that input when the layer
  // can apply it itself (a convolution, an expression) unless
  // options.fuse_activations is off, and allocates outputs for the annotated
  // batch size, planned or not (options.buffer_planning). A fused
  // activation's output operand then holds the producer's tensors. Calls
  // Init() first if nothing is loaded yet. The graph keeps `options` until
  // the next Build (runtime_options.hpp says what each one does).
  //
  // Each layer keeps its own copy of its weights, so Build frees the raw data
  // of every attribute once its layer exists (type and shape stay): after
  // Build, op.attribute is what a graph loaded without its .pnnx.bin holds.
  // Calling Build again therefore loads the graph again (Init(): new
  // operators, so earlier RuntimeOperator pointers are stale, and changes made
  // to operators by hand are gone).
  void Build(const RuntimeOptions& options, TopoAlgorithm algorithm = TopoAlgorithm::kReverseDfs);
  // With the default options.
  void Build(TopoAlgorithm algorithm = TopoAlgorithm::kReverseDfs) {
    Build(RuntimeOptions{}, algorithm);
  }
  // The options of the last Build (the defaults before any).
  const RuntimeOptions& options() const { return options_; }

  // Runs the graph. inputs[i] is the batch for the i-th pnnx.Input (in file
  // order); the result holds one batch per pnnx.Output. A layer that fails
  // ends the run with a kuiper::Error naming the operator, its input shapes
  // and its declared output shapes: a LayerError for a failed InferStatus,
  // the layer's own type (ShapeError, NotImplemented, ...) for what it throws.
  std::vector<std::vector<sftensor>> Forward(const std::vector<std::vector<sftensor>>& inputs);
  // The common case of one input and one output.
  std::vector<sftensor> Forward(const std::vector<sftensor>& batch);

  // Optional per-operator timing: when set, Forward calls `profiler` after each
  // layer with the operator and its Forward() wall time in milliseconds (used
  // by `kuiper bench --profile`). An empty function turns timing off.
  using Profiler = std::function<void(const RuntimeOperator& op, double ms)>;
  void set_profiler(Profiler profiler) { profiler_ = std::move(profiler); }

  // Activation memory planning (RuntimeOptions::buffer_planning, on by
  // default). On, AllocateOutputs lays the outputs of known shape into one
  // buffer, and operands whose lifetimes do not overlap in the execution
  // order share its bytes (runtime_graph.cpp says how). Off, each operand
  // owns its tensors. Either way Forward returns copies: what it returns is
  // the caller's, and no later run overwrites it. An intermediate operand's
  // tensors (op->output_operand->datas) are only meaningful until a later
  // operator of the same run reuses their memory, and must not be kept past
  // the next Build or batch change, which frees it.
  bool buffer_planning() const { return options_.buffer_planning; }
  // Bytes of the planned buffer at the allocated batch (0 when planning is off).
  uint64_t planned_bytes() const { return planned_floats_ * sizeof(float); }

  // Topological orders. Both throw GraphError naming an operator on a cycle.
  std::vector<RuntimeOperator*> ReverseTopo() const;
  std::vector<RuntimeOperator*> KahnTopoSort() const;  // lab course4_topo

  // Lab course3_graph: copies every PNNX parameter into op.params as the
  // matching RuntimeParameter.
  static void InitGraphParams(const std::map<std::string, pnnx::Parameter>& params,
                              RuntimeOperator& op);

  // Lab course3_graph: stores every PNNX attribute in op.attribute as float
  // weights: same shape, type kF32, the elements of `attrs` (f32, f64, f16,
  // i64, i32, i16, i8, u8 or bool bytes) converted to float. Throws ParseError
  // naming the operator and the attribute when the bytes do not fit the shape
  // and type.
  static void InitGraphAttrs(const std::map<std::string, pnnx::Attribute>& attrs,
                             RuntimeOperator& op);

  // Operators in file order, and in execution order once built.
  const std::vector<std::unique_ptr<RuntimeOperator>>& operators() const { return operators_; }
  const std::vector<RuntimeOperator*>& topo_operators() const { return topo_operators_; }
  RuntimeOperator* FindOperator(const std::string& name) const;
  const std::vector<RuntimeOperator*>& input_operators() const { return inputs_; }
  const std::vector<RuntimeOperator*>& output_operators() const { return outputs_; }
  bool built() const { return built_; }

 private:
  void Load(bool with_params);
  void ConnectOperators();
  void FuseActivations();
  void AllocateOutputs(uint32_t batch);
  void PlanOutputs(uint32_t batch,
                   const std::vector<std::pair<RuntimeOperand*, std::vector<uint32_t>>>& known);

  std::string param_path_;
  std::string bin_path_;
  std::unique_ptr<pnnx::Graph> memory_graph_;  // set by the in-memory constructor
  std::vector<std::unique_ptr<RuntimeOperator>> operators_;
  std::vector<std::unique_ptr<RuntimeOperand>> operands_;
  std::map<const RuntimeOperand*, RuntimeOperator*> producers_;
  std::vector<RuntimeOperator*> topo_operators_;
  std::vector<RuntimeOperator*> inputs_;
  std::vector<RuntimeOperator*> outputs_;
  std::set<const RuntimeOperand*> fused_outputs_;  // outputs of fused activations
  uint32_t allocated_batch_ = 0;
  struct FreeFloats {
    void operator()(float* p) const;
  };
  RuntimeOptions options_;                      // of the last Build
  std::unique_ptr<float, FreeFloats> planned_;  // the planned buffer (PlanOutputs)
  uint64_t planned_floats_ = 0;
  uint64_t weight_bytes_ = 0;      // bytes of every attribute, as loaded
  bool weights_released_ = false;  // Build freed attribute data: a new Build reloads it
  bool built_ = false;
  Profiler profiler_;
};

// Shape of one batch item of an operand whose annotated shape is `shapes`
// (batch first): (N,C,H,W) -> {C,H,W}, (N,F) -> {F}, (N,A,H,W,K) -> {A,H,W,K}.
// Throws ShapeError for unknown (-1) dimensions or ranks outside 2..8.
std::vector<uint32_t> BatchItemShape(const std::vector<int>& shapes);

}  // namespace kuiper
