// torch.cat: joins the items of several operands along `dim`, counted with the
// batch as dimension 0 (negative counts from the end, as in PyTorch).
#include <fmt/format.h>

#include "item_axis.hpp"
#include "kuiper/layer.hpp"
#include "kuiper/parallel.hpp"

namespace kuiper {
namespace {

class CatLayer : public Layer {
 public:
  explicit CatLayer(int dim) : Layer("Cat"), dim_(dim) {}

  InferStatus Forward(const std::vector<sftensor>& inputs,
                      std::vector<sftensor>& outputs) override {
    if (inputs.empty()) return InferStatus::kInferFailedInputEmpty;
    if (outputs.empty()) return InferStatus::kInferFailedOutputEmpty;
    const size_t batch = outputs.size();
    if (inputs.size() % batch != 0) return InferStatus::kInferFailedInputOutSizeMatchError;
    for (const sftensor& input : inputs) {
      if (!input || input->empty()) return InferStatus::kInferFailedInputEmpty;
    }
    const size_t operands = inputs.size() / batch;
    const int rank = static_cast<int>(inputs[0]->raw_shapes().size());
    const int dim = dim_ < 0 ? dim_ + rank + 1 : dim_;
    if (dim < 1 || dim > rank) return InferStatus::kInferFailedShapeError;

    std::vector<std::vector<uint32_t>> shapes(batch);
    for (size_t i = 0; i < batch; ++i) {
      std::vector<uint32_t> shape = inputs[i]->raw_shapes();
      shape[dim - 1] = 0;
      for (size_t k = 0; k < operands; ++k) {
        const std::vector<uint32_t>& part = inputs[k * batch + i]->raw_shapes();
        if (static_cast<int>(part.size()) != rank) return InferStatus::kInferFailedShapeError;
        for (int d = 0; d < rank; ++d) {
          if (d != dim - 1 && part[d] != shape[d]) return InferStatus::kInferFailedShapeError;
        }
        shape[dim - 1] += part[dim - 1];
      }
      shapes[i] = std::move(shape);
    }
    for (size_t i = 0; i < batch; ++i) EnsureOutput(outputs[i], shapes[i]);

    // One copy per (item, part), shared among the threads: a batch of one
    // still has several parts to copy. Joined along the item's first
    // dimension (rank 3 and up), a part is one range of the item, and the
    // graph's buffer plan lays it there when it can (runtime_graph.cpp,
    // "Joins in place"): such a part is not copied.
    const bool ranges = dim == 1 && rank >= 3;
    // Each copy its own part: copies differ in size, and threads claim them one at a time.
    ParallelForEach(static_cast<int64_t>(batch * operands), [&](int64_t copy) {
      const size_t i = copy / operands, k = copy % operands;
      uint32_t offset = 0;  // where part k starts along the joined dimension
      size_t floats = 0;    // and in the item's memory, for `ranges`
      for (size_t before = 0; before < k; ++before) {
        offset += inputs[before * batch + i]->raw_shapes()[dim - 1];
        floats += inputs[before * batch + i]->size();
      }
      const ftensor& part = *inputs[k * batch + i];
      if (ranges && part.raw_ptr() == outputs[i]->raw_ptr() + floats) return;
      const uint32_t size = part.raw_shapes()[dim - 1];
      CopyAlongAxis(LocateAxis(part.raw_shapes(), dim - 1), part.data(), size, 0, 1,
                    outputs[i]->data(), shapes[i][dim - 1], offset, size);
    });
    return InferStatus::kInferSuccess;
  }

 private:
  int dim_;
};

std::unique_ptr<Layer> CreateCat(const RuntimeOperator& op) {
  const int dim = op.param<int>("dim");
  if (dim == 0) {
    throw LayerError(
        fmt::format("operator '{}' ({}): dim=0 would join along the batch", op.name, op.type));
  }
  return std::make_unique<CatLayer>(dim);
}

LayerRegistererWrapper kCatRegistration({"torch.cat"}, CreateCat);

}  // namespace
}  // namespace kuiper
