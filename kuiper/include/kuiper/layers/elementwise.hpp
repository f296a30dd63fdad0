// Layers that turn every input item into one output item of the same shape,
// element by element (ReLU, SiLU, Hardswish, ...): the input checks and the
// batch loop are written once here.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kuiper/layer.hpp"
#include "kuiper/parallel.hpp"

namespace kuiper {

// The statuses a layer reports before computing, for a batch that arrives as
// `input_operands` input tensors and `output_operands` output slots per item
// (operand k's items next to each other, as RuntimeGraph lays them out), in
// this order: kInferFailedInputEmpty for no inputs, kInferFailedOutputEmpty
// for no output slots, kInferFailedBatchMatchError when the inputs are not
// whole items, kInferFailedInputOutSizeMatchError when the outputs are not as
// many items, and kInferFailedInputEmpty for a null or empty input.
InferStatus CheckOperands(const std::vector<sftensor>& inputs, const std::vector<sftensor>& outputs,
                          size_t input_operands, size_t output_operands);

// CheckOperands for a layer of one input operand and one output operand.
InferStatus CheckOneToOne(const std::vector<sftensor>& inputs,
                          const std::vector<sftensor>& outputs);

// Items at least this large are shared out among the threads element by element.
inline constexpr int64_t kParallelElements = int64_t{1} << 15;

// output[i] = fn(input[i]) for every element; output must have input's size.
// A large item is cut into one range per thread (inside the batch loop's
// body, it runs on the calling thread); `simd` asks the compiler to vectorize
// fn across elements.
template <typename Fn>
void MapElements(const ftensor& input, ftensor& output, Fn fn) {
  const float* x = input.raw_ptr();
  float* y = output.raw_ptr();
  const int64_t n = input.size();
  ParallelRanges(n, n >= kParallelElements ? MaxThreads() : 1,
                 [&](int64_t begin, int64_t end, int) {
#pragma omp simd
                   for (int64_t i = begin; i < end; ++i) y[i] = fn(x[i]);
                 });
}

class ElementwiseLayer : public Layer {
 public:
  using Layer::Layer;

  // Checks (CheckOneToOne), gives every output slot its input's shape and
  // calls Apply on each batch item, items in parallel when there are several
  // (one item parallelises inside, see MapElements).
  InferStatus Forward(const std::vector<sftensor>& inputs, std::vector<sftensor>& outputs) override;

 protected:
  // Writes the function of `input` into `output`, which has input's shape.
  virtual void Apply(const ftensor& input, ftensor& output) const = 0;
};

}  // namespace kuiper
