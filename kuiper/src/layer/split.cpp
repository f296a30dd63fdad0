// The operators with several outputs: torch.split, torch.chunk and
// torch.tensor_split, as pnnx writes them (one operator line with k output
// operands), and what the ONNX importer emits for ONNX Split (torch.split with
// the sizes). Each cuts dimension `dim` (counted with the batch as 0, negative
// from the end, as in PyTorch) into k consecutive pieces; output j of every
// batch item is piece j. How the pieces are sized:
//   torch.split   split_size_or_sections=s   pieces of s, the last one smaller
//                 split_size_or_sections=(a,b,..)  pieces of a, b, ... (sum = size)
//   torch.chunk   chunks=c                   pieces of ceil(size/c), the last smaller
//   torch.tensor_split sections=k            the first size%k pieces one longer
//                 indices=(i1,i2,..)         [0,i1), [i1,i2), ..., [ik,size)
// The piece count must equal the operator's output count, and no piece may be
// empty (an engine tensor has no zero dimension); both are checked on every
// run, because the size along `dim` is known only then. The batch axis itself
// (dim 0) cannot be split: an operand's items all belong to one batch.
#include <fmt/format.h>

#include <algorithm>

#include "item_axis.hpp"
#include "kuiper/error.hpp"
#include "kuiper/layer.hpp"

namespace kuiper {
namespace {

struct Piece {
  int64_t start = 0, length = 0;
};

enum class SplitKind { kSizes, kEvenSize, kSections, kIndices };

// The pieces of a dimension of `size` elements, or an empty vector when the
// parameters do not fit it (sizes that do not add up to it).
std::vector<Piece> Pieces(SplitKind kind, const std::vector<int>& values, int64_t size) {
  std::vector<Piece> pieces;
  switch (kind) {
    case SplitKind::kSizes: {
      int64_t start = 0;
      for (int length : values) {
        pieces.push_back({start, length});
        start += length;
      }
      if (start != size) pieces.clear();
      break;
    }
    case SplitKind::kEvenSize:  // torch.split with an int, and torch.chunk
      for (int64_t start = 0; start < size; start += values[0]) {
        pieces.push_back({start, std::min<int64_t>(values[0], size - start)});
      }
      break;
    case SplitKind::kSections: {
      const int64_t k = values[0];
      int64_t start = 0;
      for (int64_t j = 0; j < k; ++j) {
        const int64_t length = size / k + (j < size % k ? 1 : 0);
        pieces.push_back({start, length});
        start += length;
      }
      break;
    }
    case SplitKind::kIndices: {
      // Python slice bounds: negative counts from the end, then clamped.
      const auto bound = [size](int64_t i) {
        return std::clamp<int64_t>(i < 0 ? i + size : i, 0, size);
      };
      int64_t start = 0;
      for (int index : values) {
        const int64_t end = bound(index);
        pieces.push_back({start, std::max<int64_t>(end - start, 0)});
        start = std::max(start, end);
      }
      pieces.push_back({start, size - start});
      break;
    }
  }
  return pieces;
}

class SplitLayer : public Layer {
 public:
  SplitLayer(int dim, SplitKind kind, std::vector<int> values)
      : Layer("Split"), dim_(dim), kind_(kind), values_(std::move(values)) {}

  InferStatus Forward(const std::vector<sftensor>& inputs,
                      std::vector<sftensor>& outputs) override {
    if (inputs.empty()) return InferStatus::kInferFailedInputEmpty;
    if (outputs.empty()) return InferStatus::kInferFailedOutputEmpty;
    const size_t batch = inputs.size();
    if (outputs.size() % batch != 0) return InferStatus::kInferFailedInputOutSizeMatchError;
    const size_t count = outputs.size() / batch;  // output operands
    for (const sftensor& input : inputs) {
      if (!input || input->empty()) return InferStatus::kInferFailedInputEmpty;
    }
    for (size_t i = 0; i < batch; ++i) {
      const std::vector<uint32_t>& raw = inputs[i]->raw_shapes();
      const int rank = static_cast<int>(raw.size());
      const int dim = dim_ < 0 ? dim_ + rank + 1 : dim_;
      if (dim < 1 || dim > rank) return InferStatus::kInferFailedShapeError;
      const std::vector<Piece> pieces = Pieces(kind_, values_, raw[dim - 1]);
      if (pieces.size() != count) return InferStatus::kInferFailedShapeError;
      const ItemAxis axis = LocateAxis(raw, dim - 1);
      for (size_t j = 0; j < count; ++j) {
        if (pieces[j].length <= 0) return InferStatus::kInferFailedShapeError;
        std::vector<uint32_t> shape = raw;
        shape[dim - 1] = static_cast<uint32_t>(pieces[j].length);
        sftensor& out = outputs[j * batch + i];
        EnsureOutput(out, shape);
        CopyAlongAxis(axis, inputs[i]->data(), raw[dim - 1], pieces[j].start, 1, out->data(),
                      pieces[j].length, 0, pieces[j].length);
      }
    }
    return InferStatus::kInferSuccess;
  }

 private:
  int dim_;
  SplitKind kind_;
  std::vector<int> values_;
};

// torch.chunk is torch.split with pieces of ceil(size/chunks); that size is
// known at run time only, so the layer works it out from `chunks` each run.
class ChunkLayer : public Layer {
 public:
  ChunkLayer(int dim, int chunks) : Layer("Chunk"), dim_(dim), chunks_(chunks) {}

  InferStatus Forward(const std::vector<sftensor>& inputs,
                      std::vector<sftensor>& outputs) override {
    if (inputs.empty() || !inputs[0] || inputs[0]->empty()) {
      return InferStatus::kInferFailedInputEmpty;
    }
    const std::vector<uint32_t>& raw = inputs[0]->raw_shapes();
    const int rank = static_cast<int>(raw.size());
    const int dim = dim_ < 0 ? dim_ + rank + 1 : dim_;
    if (dim < 1 || dim > rank) return InferStatus::kInferFailedShapeError;
    const int size = static_cast<int>(raw[dim - 1]);
    SplitLayer split(dim_, SplitKind::kEvenSize, {(size + chunks_ - 1) / chunks_});
    return split.Forward(inputs, outputs);
  }

 private:
  int dim_, chunks_;
};

LayerError Fail(const RuntimeOperator& op, const std::string& why) {
  return LayerError(fmt::format("operator '{}' ({}): {}", op.name, op.type, why));
}

// Checks shared by the three types: a dim that is not the batch, at least one output.
int SplitDim(const RuntimeOperator& op) {
  const int dim = op.param<int>("dim");
  if (dim == 0) throw Fail(op, "dim=0 would split the batch, which the engine keeps whole");
  if (op.output_operands.empty()) throw Fail(op, "has no output operand");
  return dim;
}

std::unique_ptr<Layer> CreateSplit(const RuntimeOperator& op) {
  const int dim = SplitDim(op);
  const auto it = op.params.find("split_size_or_sections");
  if (it != op.params.end()) {
    if (const int* size = std::get_if<int>(&it->second)) {
      if (*size < 1) throw Fail(op, fmt::format("split_size_or_sections={} must be >= 1", *size));
      return std::make_unique<SplitLayer>(dim, SplitKind::kEvenSize, std::vector<int>{*size});
    }
    if (const auto* sizes = std::get_if<std::vector<int>>(&it->second)) {
      if (sizes->size() != op.output_operands.size() ||
          std::any_of(sizes->begin(), sizes->end(), [](int s) { return s < 1; })) {
        throw Fail(op, fmt::format("split_size_or_sections={} must be {} sizes >= 1, one per "
                                   "output",
                                   ShapeText(*sizes), op.output_operands.size()));
      }
      return std::make_unique<SplitLayer>(dim, SplitKind::kSizes, *sizes);
    }
  }
  throw Fail(op, "parameter 'split_size_or_sections' must be an int or an int array");
}

std::unique_ptr<Layer> CreateChunk(const RuntimeOperator& op) {
  const int dim = SplitDim(op);
  const int chunks = op.param<int>("chunks");
  if (chunks < 1) throw Fail(op, fmt::format("chunks={} must be >= 1", chunks));
  return std::make_unique<ChunkLayer>(dim, chunks);
}

std::unique_ptr<Layer> CreateTensorSplit(const RuntimeOperator& op) {
  const int dim = SplitDim(op);
  if (op.has_param("indices")) {
    const auto indices = op.param<std::vector<int>>("indices");
    if (indices.size() + 1 != op.output_operands.size()) {
      throw Fail(op,
                 fmt::format("indices={} make {} pieces, but the operator has {} outputs",
                             ShapeText(indices), indices.size() + 1, op.output_operands.size()));
    }
    return std::make_unique<SplitLayer>(dim, SplitKind::kIndices, indices);
  }
  const int sections = op.param<int>("sections");
  if (sections < 1 || static_cast<size_t>(sections) != op.output_operands.size()) {
    throw Fail(op, fmt::format("sections={} must be >= 1 and equal the {} outputs", sections,
                               op.output_operands.size()));
  }
  return std::make_unique<SplitLayer>(dim, SplitKind::kSections, std::vector<int>{sections});
}

LayerRegistererWrapper kSplitRegistration({"torch.split"}, CreateSplit);
LayerRegistererWrapper kChunkRegistration({"torch.chunk"}, CreateChunk);
LayerRegistererWrapper kTensorSplitRegistration({"torch.tensor_split"}, CreateTensorSplit);

}  // namespace
}  // namespace kuiper
