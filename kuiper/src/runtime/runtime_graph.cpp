#include <fmt/format.h>
#include <fmt/ranges.h>
#include <glog/logging.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <limits>
#include <map>
#include <set>
#include <string>

#include "kuiper/error.hpp"
#include "kuiper/graph.hpp"
#include "kuiper/layer.hpp"
#include "kuiper/layers/convolution.hpp"
#include "kuiper/memory_limit.hpp"
#include "kuiper/parallel.hpp"

namespace kuiper {

namespace {

bool IsInput(const RuntimeOperator& op) { return op.type == "pnnx.Input"; }
bool IsOutput(const RuntimeOperator& op) { return op.type == "pnnx.Output"; }

std::string Describe(const RuntimeOperator& op) {
  return fmt::format("'{}' ({})", op.name, op.type);
}

// What an operator was given and what the model says it makes, for its
// errors: "input shapes (1,3,8,8) of rank 4; declared output shapes (1,4,8,8)".
// The inputs as run (batch first, with the rank: a layer that needs
// N x C x H x W names no rank itself when given another), the outputs as
// declared (`?` for a dynamic dimension).
std::string OperatorShapes(const RuntimeOperator& op) {
  std::vector<std::string> inputs;
  for (const RuntimeOperand* operand : op.input_operands) {
    const sftensor& item = operand->datas.empty() ? nullptr : operand->datas.front();
    if (!item) {
      inputs.push_back("(none)");
      continue;
    }
    std::vector<uint32_t> shape{static_cast<uint32_t>(operand->datas.size())};
    shape.insert(shape.end(), item->raw_shapes().begin(), item->raw_shapes().end());
    inputs.push_back(fmt::format("{} of rank {}", ShapeText(shape), shape.size()));
  }
  std::vector<std::string> outputs;
  for (const RuntimeOperand* operand : op.output_operands) {
    std::vector<std::string> dims;
    for (int dim : operand->shapes) dims.push_back(dim < 0 ? "?" : std::to_string(dim));
    outputs.push_back(dims.empty() ? "(unknown)" : fmt::format("({})", fmt::join(dims, ",")));
  }
  return fmt::format("input shapes {}; declared output shapes {}", fmt::join(inputs, ", "),
                     fmt::join(outputs, ", "));
}

// Runs the operator's layer. Whatever goes wrong leaves as a kuiper::Error
// that names the operator and its shapes: a failed InferStatus becomes a
// LayerError, and an Error thrown inside the layer (a tensor's ShapeError, an
// unwritten lab's NotImplemented) keeps its type and gains the operator.
void RunLayer(RuntimeOperator& op) {
  InferStatus status;
  try {
    status = op.layer->Forward();
  } catch (Error& error) {
    error.AddContext(fmt::format("in operator {}; {}", Describe(op), OperatorShapes(op)));
    throw;
  }
  if (status != InferStatus::kInferSuccess) {
    throw LayerError(fmt::format("operator {} failed: {} ({})", Describe(op),
                                 InferStatusName(status), OperatorShapes(op)));
  }
}

bool ByIndex(const RuntimeOperator* a, const RuntimeOperator* b) { return a->index < b->index; }

// Level 1 of glog's verbose log (kuiper --verbose, or GLOG_v=1 in any program):
// what Build made of the model, so that a reader can see the engine's
// decisions: the operators by type, the route each convolution takes, the
// activations fused into the layer before them.
void LogBuild(const std::string& name, const std::vector<RuntimeOperator*>& topo_operators,
              const std::set<const RuntimeOperand*>& fused_outputs) {
  std::map<std::string, int> per_type;
  for (const RuntimeOperator* op : topo_operators) {
    ++per_type[op->type];
    if (const auto* conv = dynamic_cast<const ConvolutionLayer*>(op->layer.get())) {
      VLOG(1) << fmt::format("{}: convolution {} takes the {} route", name, Describe(*op),
                             ConvRouteName(conv->route()));
    } else if (op->output_operand && fused_outputs.count(op->output_operand)) {
      VLOG(1) << fmt::format("{}: {} is fused into the layer before it", name, Describe(*op));
    }
  }
  std::vector<std::string> counts;
  for (const auto& [type, count] : per_type) counts.push_back(fmt::format("{} {}", type, count));
  VLOG(1) << fmt::format("{}: {} operators ({}), {} activation(s) fused", name,
                         topo_operators.size(), fmt::join(counts, ", "), fused_outputs.size());
}

}  // namespace

std::vector<uint32_t> BatchItemShape(const std::vector<int>& shapes) {
  if (shapes.size() < 2 || shapes.size() > kMaxTensorRank + 1 ||
      std::any_of(shapes.begin() + 1, shapes.end(), [](int d) { return d <= 0; })) {
    throw ShapeError(
        fmt::format("operand shape {} is not a batch of known tensors of 1 to {} dimensions",
                    ShapeText(shapes), kMaxTensorRank));
  }
  return {shapes.begin() + 1, shapes.end()};
}

RuntimeGraph::RuntimeGraph(std::string param_path, std::string bin_path)
    : param_path_(std::move(param_path)), bin_path_(std::move(bin_path)) {}

RuntimeGraph::RuntimeGraph(pnnx::Graph graph, std::string name)
    : param_path_(std::move(name)),
      memory_graph_(std::make_unique<pnnx::Graph>(std::move(graph))) {}

void RuntimeGraph::FreeFloats::operator()(float* p) const { std::free(p); }

RuntimeGraph::~RuntimeGraph() = default;

void RuntimeGraph::Init() { Load(/*with_params=*/true); }

void RuntimeGraph::InitTopology() { Load(/*with_params=*/false); }

void RuntimeGraph::Load(bool with_params) {
  // A copy of the in-memory graph: its attributes move into the operators below.
  pnnx::Graph graph = memory_graph_                       ? *memory_graph_
                      : bin_path_.empty() || !with_params ? pnnx::LoadParam(param_path_)
                                                          : pnnx::Load(param_path_, bin_path_);
  const bool weights_loaded = memory_graph_ || (!bin_path_.empty() && with_params);
  operators_.clear();
  operands_.clear();
  built_ = false;
  weights_released_ = false;
  for (const pnnx::Operand& operand : graph.operands) {
    auto runtime_operand = std::make_unique<RuntimeOperand>();
    runtime_operand->name = operand.name;
    runtime_operand->shapes = operand.shape;
    runtime_operand->type = operand.type;
    runtime_operand->unbatched_shape = operand.unbatched_shape;
    operands_.push_back(std::move(runtime_operand));
  }
  for (size_t i = 0; i < graph.operators.size(); ++i) {
    pnnx::Operator& source = graph.operators[i];
    auto op = std::make_unique<RuntimeOperator>();
    op->type = source.type;
    op->name = source.name;
    op->index = static_cast<int>(i);
    if (with_params) {
      InitGraphParams(source.params, *op);
      // A graph read without its .pnnx.bin has attribute shapes but no bytes
      // to convert: they stay as read, and a layer that asks for one reports it.
      if (weights_loaded) {
        InitGraphAttrs(source.attrs, *op);
      } else {
        op->attribute = std::move(source.attrs);
      }
    }
    for (int input : source.inputs) op->input_operands.push_back(operands_.at(input).get());
    for (int output : source.outputs) op->output_operands.push_back(operands_.at(output).get());
    if (!op->output_operands.empty()) op->output_operand = op->output_operands.front();
    operators_.push_back(std::move(op));
  }
  ConnectOperators();
}

void RuntimeGraph::ConnectOperators() {
  producers_.clear();
  inputs_.clear();
  outputs_.clear();
  for (const auto& op : operators_) {
    for (const RuntimeOperand* output : op->output_operands) producers_[output] = op.get();
  }
  for (const auto& op : operators_) {
    std::set<RuntimeOperator*> producers;
    for (const RuntimeOperand* operand : op->input_operands) {
      const auto it = producers_.find(operand);
      if (it == producers_.end()) {
        throw GraphError(fmt::format("operator {}: input operand '{}' has no producer",
                                     Describe(*op), operand->name));
      }
      producers.insert(it->second);
    }
    op->input_operators.assign(producers.begin(), producers.end());
    std::sort(op->input_operators.begin(), op->input_operators.end(), ByIndex);
    for (RuntimeOperator* producer : op->input_operators) {
      producer->output_operators.push_back(op.get());  // ops are visited in file order
    }
    if (IsInput(*op)) inputs_.push_back(op.get());
    if (IsOutput(*op)) outputs_.push_back(op.get());
  }
  for (const auto& op : operators_) {
    if (!IsOutput(*op) && op->output_operators.empty()) {
      throw GraphError(fmt::format(
          "operator {} is disconnected: its output is never used (only pnnx.Output may end a "
          "path)",
          Describe(*op)));
    }
  }
}

std::vector<RuntimeOperator*> RuntimeGraph::ReverseTopo() const {
  enum class Mark { kNew, kOnPath, kDone };
  std::map<const RuntimeOperator*, Mark> marks;
  std::vector<RuntimeOperator*> post_order;
  // Iterative depth-first search, so a long chain of operators cannot
  // overflow the call stack. Each frame is an operator and its next child.
  auto visit = [&](RuntimeOperator* root) {
    std::vector<std::pair<RuntimeOperator*, size_t>> stack{{root, 0}};
    marks[root] = Mark::kOnPath;
    while (!stack.empty()) {
      auto& [op, next] = stack.back();
      if (next == op->output_operators.size()) {
        marks[op] = Mark::kDone;
        post_order.push_back(op);
        stack.pop_back();
        continue;
      }
      // Children in reverse file order, so that once reversed the order
      // follows the file where it can.
      RuntimeOperator* child = op->output_operators[op->output_operators.size() - 1 - next++];
      const Mark mark = marks[child];
      if (mark == Mark::kOnPath) {
        throw GraphError(
            fmt::format("the graph has a cycle through operator {}", Describe(*child)));
      }
      if (mark == Mark::kNew) {
        marks[child] = Mark::kOnPath;
        stack.emplace_back(child, 0);
      }
    }
  };
  // Roots in reverse file order for the same reason: the first input comes first.
  for (auto it = operators_.rbegin(); it != operators_.rend(); ++it) {
    if ((*it)->input_operators.empty()) visit(it->get());
  }
  // Operators not reached from a root lie on or behind a cycle; visiting them
  // reports it.
  for (const auto& op : operators_) {
    if (marks[op.get()] == Mark::kNew) visit(op.get());
  }
  std::reverse(post_order.begin(), post_order.end());
  return post_order;
}

void RuntimeGraph::Build(const RuntimeOptions& options, TopoAlgorithm algorithm) {
  options_ = options;
  const ThreadLimit thread_limit(options_.threads);  // the layers' weight transforms
  // A graph built before gave its weights to its layers (below): read them again.
  if (operators_.empty() || weights_released_) Init();
  topo_operators_ = algorithm == TopoAlgorithm::kKahn ? KahnTopoSort() : ReverseTopo();

  std::map<std::string, std::vector<std::string>> missing;  // type -> operator names
  for (RuntimeOperator* op : topo_operators_) {
    if (!IsInput(*op) && !IsOutput(*op) && !LayerRegisterer::HasCreator(op->type)) {
      missing[op->type].push_back(op->name);
    }
  }
  if (!missing.empty()) {
    std::vector<std::string> items;
    for (const auto& [type, names] : missing) {
      items.push_back(fmt::format("{} (operators {})", type, fmt::join(names, ", ")));
    }
    throw LayerError(fmt::format("{}: no layer is registered for {} type(s): {}", param_path_,
                                 missing.size(), fmt::join(items, "; ")));
  }
  weight_bytes_ = 0;
  for (const auto& op : operators_) {
    for (const auto& [key, attr] : op->attribute) weight_bytes_ += attr.data.size();
  }
  // The caller's allocator policy, if any, after every 8 MB of freed weights.
  uint64_t unreported = 0;
  const auto weights_freed = [&] {
    if (options_.weights_freed && unreported > 0) options_.weights_freed();
    unreported = 0;
  };
  for (RuntimeOperator* op : topo_operators_) {
    if (IsInput(*op) || IsOutput(*op)) continue;
    op->options = options_;
    op->layer = LayerRegisterer::CreateLayer(*op);
    op->layer->set_runtime_operator(op);
    // Every layer copies (and converts, and lays out) what it needs of its
    // attributes when it is created, and nothing reads their raw bytes after
    // that: freed now, one operator at a time, the weights are never held
    // twice (ResNet18: 47 MB). Type and shape stay, as for a graph loaded
    // without its .pnnx.bin.
    for (auto& [key, attr] : op->attribute) {
      if (attr.data.empty()) continue;
      unreported += attr.data.size();
      std::vector<char>().swap(attr.data);
      weights_released_ = true;
    }
    // glibc keeps freed blocks for reuse (after the first large free, even
    // multi-megabyte ones come from its heap, not from mmap), and the next
    // layers' weights, larger, do not fit in them: unless the program gives
    // them back, the process holds both copies anyway. Every 8 MB keeps the
    // peak as low as after every operator, for a little less loading time:
    // the pages given back are faulted in again for the next layers' copies
    // (docs/performance.md#graph-memory).
    if (unreported >= (8u << 20)) weights_freed();
  }
  weights_freed();
  // Only the batch may be dynamic (`?` in PNNX, read as -1; a dim_param in
  // ONNX): the graph then runs at the batch of the input it is given, and is
  // allocated for 1 until then. Any other unknown input dimension is an error.
  for (const RuntimeOperator* input : inputs_) {
    const std::vector<int>& shape = input->output_operand->shapes;
    for (size_t d = 1; d < shape.size(); ++d) {
      if (shape[d] < 0) {
        throw GraphError(fmt::format(
            "{}: input {} declares {} with dimension {} unknown; only the batch (dimension "
            "0) may be dynamic (?)",
            param_path_, Describe(*input), ShapeText(shape), d));
      }
    }
  }
  FuseActivations();
  if (VLOG_IS_ON(1)) LogBuild(param_path_, topo_operators_, fused_outputs_);
  uint32_t batch = 1;
  if (!inputs_.empty() && inputs_[0]->output_operand->shapes.size() > 0 &&
      inputs_[0]->output_operand->shapes[0] > 0) {
    batch = inputs_[0]->output_operand->shapes[0];
  }
  AllocateOutputs(batch);
  built_ = true;
}

namespace {

// Stands in for an activation fused into the layer before it: that layer's
// output, already activated, is this operator's output too.
class FusedActivationLayer : public Layer {
 public:
  using Layer::Layer;

  InferStatus Forward(const std::vector<sftensor>& inputs,
                      std::vector<sftensor>& outputs) override {
    if (inputs.empty()) return InferStatus::kInferFailedInputEmpty;
    if (outputs.size() != inputs.size()) return InferStatus::kInferFailedInputOutSizeMatchError;
    outputs = inputs;  // the same tensors: nothing to compute or copy
    return InferStatus::kInferSuccess;
  }
};

}  // namespace

void RuntimeGraph::FuseActivations() {
  fused_outputs_.clear();
  if (!options_.fuse_activations) return;
  for (RuntimeOperator* op : topo_operators_) {
    // The activation must be the only reader of op's output, and read nothing else.
    if (!op->layer || op->output_operands.size() != 1 || op->output_operators.size() != 1) {
      continue;
    }
    RuntimeOperator* next = op->output_operators.front();
    const Activation activation = ActivationOfType(next->type);
    if (activation == Activation::kNone || !next->layer || next->input_operands.size() != 1) {
      continue;
    }
    if (!op->layer->FuseActivation(activation)) continue;
    next->layer = std::make_unique<FusedActivationLayer>(next->name);
    next->layer->set_runtime_operator(next);
    fused_outputs_.insert(next->output_operand);
  }
}

void RuntimeGraph::AllocateOutputs(uint32_t batch) {
  // First the memory check: the weights plus every operand of known shape at
  // this batch (the inputs too, which the caller allocates), before any allocation.
  uint64_t total = weight_bytes_;  // counted by Build before the layers took them
  std::vector<std::pair<RuntimeOperand*, std::vector<uint32_t>>> known;
  for (const auto& op : operators_) {
    for (RuntimeOperand* output : op->output_operands) {
      RuntimeOperand& operand = *output;
      std::vector<uint32_t> shape;
      try {
        shape = BatchItemShape(operand.shapes);
      } catch (const ShapeError&) {
        continue;  // unknown shape: the layer allocates on its first run
      }
      uint64_t bytes = SaturatingMultiply(batch, sizeof(float));
      for (uint32_t dim : shape) bytes = SaturatingMultiply(bytes, dim);
      total += std::min(bytes, std::numeric_limits<uint64_t>::max() - total);  // saturating
      CheckMemory(
          total,
          fmt::format("{}: at batch {}, the weights and the operands up to operand "
                      "'{}' {}, output of {},",
                      param_path_, batch, operand.name, ShapeText(operand.shapes), Describe(*op)),
          options_.memory_limit > 0 ? options_.memory_limit : MemoryLimit());
      // A fused activation's output is its producer's tensors: nothing to allocate.
      if (!IsInput(*op) && !fused_outputs_.count(&operand)) {
        known.emplace_back(&operand, std::move(shape));
      }
    }
  }
  allocated_batch_ = batch;
  for (const auto& op : operators_) {
    if (IsInput(*op)) continue;
    for (RuntimeOperand* output : op->output_operands) output->datas.assign(batch, nullptr);
  }
  // The old tensors are gone: their buffer can go before the new one comes.
  planned_.reset();
  planned_floats_ = 0;
  if (options_.buffer_planning) {
    PlanOutputs(batch, known);
  } else {
    for (auto& [operand, shape] : known) {
      for (auto& slot : operand->datas) slot = TensorCreate(shape);
    }
  }
  if (VLOG_IS_ON(1)) {
    uint64_t floats = 0;  // every operand of known shape in tensors of its own
    for (const auto& [operand, shape] : known) {
      uint64_t item = 1;
      for (uint32_t dim : shape) item *= dim;
      floats += item * batch;
    }
    const double mib = 1 << 20;
    VLOG(1) << fmt::format(
        "{}: at batch {}, {} operand(s) of known shape take {:.2f} MiB in tensors of their own; {}",
        param_path_, batch, known.size(), floats * sizeof(float) / mib,
        options_.buffer_planning
            ? fmt::format("planned into one buffer of {:.2f} MiB", planned_bytes() / mib)
            : std::string("buffer planning is off"));
  }
}

namespace {

// A part of a torch.cat computed in place: where in the joined operand's items.
struct JoinPart {
  RuntimeOperand* joined;  // the cat's output
  uint64_t offset;         // floats from the start of each of its items
};

// The parts of torch.cat operators that PlanOutputs lays into their cat's
// items, by the operand that holds their tensors (`storage_of`; `shape_of`:
// the planned operands' item shapes).
template <typename StorageOf>
std::map<const RuntimeOperand*, JoinPart> JoinsInPlace(
    const std::vector<RuntimeOperator*>& topo_operators,
    const std::map<const RuntimeOperand*, const std::vector<uint32_t>*>& shape_of,
    const StorageOf& storage_of) {
  std::map<const RuntimeOperand*, JoinPart> parts;
  std::set<const RuntimeOperand*> joined;  // cat outputs that have parts in place
  for (const RuntimeOperator* op : topo_operators) {
    if (op->type != "torch.cat" || !op->layer || !op->has_param("dim") ||
        op->output_operands.size() != 1 || !shape_of.count(op->output_operands[0])) {
      continue;
    }
    RuntimeOperand* out = op->output_operands[0];
    const std::vector<uint32_t>& out_shape = *shape_of.at(out);
    const int rank = static_cast<int>(out_shape.size()) + 1;  // with the batch
    const int dim = op->param<int>("dim");
    // Only along the item's first dimension, and only for items of 3 or more
    // dimensions: there a part's item is one contiguous range of the
    // joined item (Tensor keeps channel after channel; in 1-D and 2-D items
    // it does not).
    if ((dim < 0 ? dim + rank : dim) != 1 || out_shape.size() < 3) continue;
    // Each part's offset in an item, from the declared shapes, which must
    // add up to the joined one.
    std::vector<std::pair<const RuntimeOperand*, uint64_t>> placed;
    uint64_t offset = 0, joined_first = 0;
    bool declared = true;
    std::set<const RuntimeOperand*> seen;
    for (const RuntimeOperand* input : op->input_operands) {
      const RuntimeOperand* storage = storage_of(input);
      std::vector<uint32_t> shape;
      try {
        shape = BatchItemShape(input->shapes);
      } catch (const ShapeError&) {
        declared = false;
        break;
      }
      if (shape.size() != out_shape.size() ||
          !std::equal(shape.begin() + 1, shape.end(), out_shape.begin() + 1)) {
        declared = false;
        break;
      }
      uint64_t floats = 1;
      for (uint32_t d : shape) floats *= d;
      // In place unless it is the caller's input or of unknown shape (no
      // planned block), already a part of another cat, a cat with parts of
      // its own, or joined twice here.
      if (shape_of.count(storage) && *shape_of.at(storage) == shape && !parts.count(storage) &&
          !joined.count(storage) && seen.insert(storage).second) {
        placed.emplace_back(storage, offset);
      }
      offset += floats;
      joined_first += shape[0];
    }
    if (!declared || joined_first != out_shape[0] || placed.empty()) continue;
    for (const auto& [storage, at] : placed) parts[storage] = {out, at};
    joined.insert(out);
  }
  return parts;
}

}  // namespace

// Activation memory planned at Build (and again at each new batch), as ncnn's
// and ONNX Runtime's planners do. Run in topological order, an operand is
// live from the step of its producer to the step of its last reader; two
// operands whose live ranges do not overlap may use the same bytes. The
// graph's outputs stay live to the end, and the caller's inputs are not
// planned. Operands are placed largest first, each at the lowest offset of
// the buffer where it fits beside the operands already placed that are live
// at the same time (greedy by size, ORT's and TFLite's simple planner).
// `kuiper bench` prints the plan's size; docs/performance.md#graph-memory
// compares it with tensors that each own their memory.
//
// Why this is safe: a layer writes its outputs into the slots it is given
// (EnsureOutput keeps a tensor of the right shape), or replaces a slot with a
// tensor of its own (view, flatten, an expression's result), which then owns
// its memory. It never writes into its inputs. The one output that shares
// another operand's tensors is a fused activation's (FusedActivationLayer
// hands its input on): its readers count as readers of the producer's
// operand. An operator's outputs are live at the step its inputs are last
// read, so no layer ever writes over its own input. Items of a batch lie one
// after another, each at a 64-byte boundary (one AVX-512 vector).
//
// Joins in place: a torch.cat along the item's first dimension (dim 1 of
// N x C x H x W: channels) lays its parts one after another in each item, so
// each part can be computed straight into its range of the joined tensor and
// the cat has nothing left to copy (CatLayer checks, item by item, and copies
// whatever is not already in place: a layer may still hand on a tensor of
// its own). Such a part gets no block of its own: its tensors are views into
// the cat's, whose block is then live from the first part's step to the last
// reader of the cat or of any part. YOLOv5s has 13 such cats
// (docs/performance.md#graph-memory).
void RuntimeGraph::PlanOutputs(
    uint32_t batch, const std::vector<std::pair<RuntimeOperand*, std::vector<uint32_t>>>& known) {
  // The operand whose tensors `operand` holds: itself, or for a fused
  // activation's output, its producer's output (repeatedly).
  auto storage_of = [&](const RuntimeOperand* operand) {
    while (fused_outputs_.count(operand)) {
      operand = producers_.at(operand)->input_operands.front();
    }
    return operand;
  };
  const int end = static_cast<int>(topo_operators_.size());  // past the last step
  std::map<const RuntimeOperand*, int> first, last;
  for (int step = 0; step < end; ++step) {
    const RuntimeOperator* op = topo_operators_[step];
    for (const RuntimeOperand* output : op->output_operands) first[output] = step;
    for (const RuntimeOperand* input : op->input_operands) {
      const RuntimeOperand* storage = storage_of(input);
      last[storage] = IsOutput(*op) ? end : std::max(last[storage], step);
    }
  }
  std::map<const RuntimeOperand*, const std::vector<uint32_t>*> shape_of;
  for (const auto& [operand, shape] : known) shape_of[operand] = &shape;
  const std::map<const RuntimeOperand*, JoinPart> parts =
      options_.concat_in_place ? JoinsInPlace(topo_operators_, shape_of, storage_of)
                               : std::map<const RuntimeOperand*, JoinPart>{};
  // An output nobody reads (one piece of a split) is live at its own step.
  for (const auto& [operand, shape] : known) last.emplace(operand, first.at(operand));
  // A cat's block holds its parts in place: it lives as long as they do too.
  for (const auto& [part, join] : parts) {
    first[join.joined] = std::min(first.at(join.joined), first.at(part));
    last[join.joined] = std::max(last.at(join.joined), last.at(part));
  }
  struct Block {
    RuntimeOperand* operand;
    const std::vector<uint32_t>* shape;
    uint64_t item_floats;  // one item, rounded up to 16 floats (64 bytes)
    uint64_t floats;       // the whole batch
    int first, last;
    uint64_t offset = 0;
  };
  std::vector<Block> blocks;
  for (const auto& [operand, shape] : known) {
    if (parts.count(operand)) continue;  // a view into its cat's block
    uint64_t item = 1;
    for (uint32_t dim : shape) item *= dim;
    item = (item + 15) / 16 * 16;
    blocks.push_back({operand, &shape, item, item * batch, first.at(operand), last.at(operand)});
  }
  std::stable_sort(blocks.begin(), blocks.end(),
                   [](const Block& a, const Block& b) { return a.floats > b.floats; });
  std::vector<const Block*> placed;  // by offset
  for (Block& block : blocks) {
    // The lowest gap between the placed blocks live at the same time.
    uint64_t offset = 0;
    for (const Block* other : placed) {
      if (other->last < block.first || block.last < other->first) continue;  // not live together
      if (other->offset >= offset + block.floats) break;  // the gap before `other` fits
      offset = std::max(offset, other->offset + other->floats);
    }
    block.offset = offset;
    planned_floats_ = std::max(planned_floats_, offset + block.floats);
    placed.insert(
        std::upper_bound(placed.begin(), placed.end(), &block,
                         [](const Block* a, const Block* b) { return a->offset < b->offset; }),
        &block);
  }
  if (planned_floats_ == 0) return;
  // Zeroed, so that a first run sees what TensorCreate would have given it.
  planned_.reset(static_cast<float*>(std::aligned_alloc(64, planned_floats_ * sizeof(float))));
  if (!planned_) throw std::bad_alloc();
  std::fill_n(planned_.get(), planned_floats_, 0.f);
  for (const Block& block : blocks) {
    float* memory = planned_.get() + block.offset;
    for (auto& slot : block.operand->datas) {
      slot = std::make_shared<ftensor>(*block.shape, memory);
      memory += block.item_floats;
    }
  }
  std::map<const RuntimeOperand*, const Block*> block_of;
  for (const Block& block : blocks) block_of[block.operand] = &block;
  for (const auto& [operand, shape] : known) {
    const auto part = parts.find(operand);
    if (part == parts.end()) continue;
    const Block& block = *block_of.at(part->second.joined);
    float* memory = planned_.get() + block.offset + part->second.offset;
    for (auto& slot : operand->datas) {
      slot = std::make_shared<ftensor>(shape, memory);
      memory += block.item_floats;
    }
  }
}

std::vector<std::vector<sftensor>> RuntimeGraph::Forward(
    const std::vector<std::vector<sftensor>>& inputs) {
  if (!built_) throw GraphError(fmt::format("{}: Forward called before Build", param_path_));
  const ThreadLimit thread_limit(options_.threads);
  if (inputs.size() != inputs_.size()) {
    throw ShapeError(fmt::format("{}: the graph has {} input(s), got {}", param_path_,
                                 inputs_.size(), inputs.size()));
  }
  // A graph with no input (every value a constant, e.g. an ONNX model whose
  // inputs were all bound at load time) runs as one item, as Build allocated it.
  const size_t batch = inputs.empty() ? 1 : inputs[0].size();
  for (size_t i = 0; i < inputs.size(); ++i) {
    const RuntimeOperand& operand = *inputs_[i]->output_operand;
    if (inputs[i].empty() || inputs[i].size() != batch) {
      throw ShapeError(fmt::format("{}: input {} ('{}') has batch {}, expected {} (and not 0)",
                                   param_path_, i, inputs_[i]->name, inputs[i].size(), batch));
    }
    std::vector<uint32_t> expected;
    try {
      expected = BatchItemShape(operand.shapes);
    } catch (const ShapeError&) {
      // dynamic input shape: any shape is accepted
    }
    for (const sftensor& tensor : inputs[i]) {
      const std::vector<uint32_t> got = tensor ? tensor->raw_shapes() : std::vector<uint32_t>{};
      if (!tensor || tensor->empty() || (!expected.empty() && got != expected)) {
        throw ShapeError(fmt::format("{}: input {} ('{}') expects tensors of shape {}, got {}",
                                     param_path_, i, inputs_[i]->name, ShapeText(expected),
                                     ShapeText(got)));
      }
    }
  }
  // Before the inputs replace the old ones: a batch over the memory limit
  // leaves the graph as it was.
  if (batch != allocated_batch_) AllocateOutputs(batch);
  for (size_t i = 0; i < inputs.size(); ++i) inputs_[i]->output_operand->datas = inputs[i];
  for (RuntimeOperator* op : topo_operators_) {
    if (!op->layer) continue;
    const auto start = std::chrono::steady_clock::now();
    RunLayer(*op);
    if (profiler_ || VLOG_IS_ON(2)) {
      const std::chrono::duration<double, std::milli> elapsed =
          std::chrono::steady_clock::now() - start;
      if (profiler_) profiler_(*op, elapsed.count());
      VLOG(2) << fmt::format("{}: {} took {:.3f} ms", param_path_, Describe(*op), elapsed.count());
    }
  }
  std::vector<std::vector<sftensor>> outputs;
  for (RuntimeOperator* op : outputs_) {
    std::vector<sftensor> batch_out;
    for (const RuntimeOperand* operand : op->input_operands) {
      for (const sftensor& tensor : operand->datas) batch_out.push_back(TensorClone(tensor));
    }
    outputs.push_back(std::move(batch_out));
  }
  return outputs;
}

std::vector<sftensor> RuntimeGraph::Forward(const std::vector<sftensor>& batch) {
  if (inputs_.size() != 1 || outputs_.size() != 1) {
    throw GraphError(
        fmt::format("{}: the graph has {} inputs and {} outputs; use the "
                    "multi-input Forward",
                    param_path_, inputs_.size(), outputs_.size()));
  }
  return Forward(std::vector<std::vector<sftensor>>{batch}).front();
}

RuntimeOperator* RuntimeGraph::FindOperator(const std::string& name) const {
  for (const auto& op : operators_) {
    if (op->name == name) return op.get();
  }
  return nullptr;
}

}  // namespace kuiper
