// Layers that turn every input item into one output item of the same shape,
// element by element (ReLU, SiLU, Hardswish, ...): the input checks and the
// batch loop are written once here.
#pragma once

#include <string>
#include <vector>

#include "kuiper/layer.hpp"

namespace kuiper {

// The statuses a one-input-item-to-one-output-item layer reports before
// computing: kInferFailedInputEmpty for no inputs or a null/empty input,
// kInferFailedOutputEmpty for no output slots, and
// kInferFailedInputOutSizeMatchError when the batch sizes differ.
InferStatus CheckOneToOne(const std::vector<sftensor>& inputs,
                          const std::vector<sftensor>& outputs);

// output[i] = fn(input[i]) for every element; output must have input's size.
template <typename Fn>
void MapElements(const ftensor& input, ftensor& output, Fn fn) {
  const float* x = input.raw_ptr();
  float* y = output.raw_ptr();
  const uint32_t n = input.size();
  for (uint32_t i = 0; i < n; ++i) y[i] = fn(x[i]);
}

class ElementwiseLayer : public Layer {
 public:
  using Layer::Layer;

  // Checks (CheckOneToOne), gives every output slot its input's shape and
  // calls Apply on each batch item in parallel.
  InferStatus Forward(const std::vector<sftensor>& inputs, std::vector<sftensor>& outputs) override;

 protected:
  // Writes the function of `input` into `output`, which has input's shape.
  virtual void Apply(const ftensor& input, ftensor& output) const = 0;
};

}  // namespace kuiper
