// Lab course5_layers: see course5_layers/README.md.
#include "kuiper/layers/sigmoid.hpp"

#include <cmath>
#include <cstdint>
#include <memory>

#include "kuiper/parallel.hpp"

// glibc's vector library (libmvec, linked with the maths library) has expf
// for 4, 8 and 16 floats at a time, but <math.h> declares those versions only
// under -ffast-math, which would also let the compiler assume that no value
// is infinite: the very ends Sigmoid must get right. This line declares them
// without it, so that GCC turns the std::exp of a `#pragma omp simd` loop
// over floats into one call per 4 values (README "A loop the compiler
// vectorises").
#if defined(__x86_64__) && defined(__GLIBC__)
extern "C" {
#pragma omp declare simd notinbranch
float expf(float) noexcept;
}
#endif

namespace kuiper {

void Sigmoid(const float* x, float* y, size_t n) {
  // TODO(course5): y[i] = 1 / (1 + e^-x[i]) for every i < n, one loop that
  // the compiler vectorises (README "A loop the compiler vectorises"). It
  // must give exactly 0 and 1, never NaN, at the ends (x = -1000, +1000,
  // -inf, +inf): pick the form of the formula that does (README "The sigmoid
  // and its ends"). y may be x: the Detect head computes in place.
  // ---- your code begins ----
#pragma omp simd
  for (size_t i = 0; i < n; ++i) y[i] = 1.f / (1.f + std::exp(-x[i]));
  // ---- your code ends ----
}

InferStatus SigmoidLayer::Forward(const std::vector<sftensor>& inputs,
                                  std::vector<sftensor>& outputs) {
  // TODO(course5): outputs[i] becomes the sigmoid of every element of
  // inputs[i], with the shape of inputs[i] (of any rank). A layer never
  // trusts its caller: first check the batch and answer with the status of
  // the README's table, in the table's order, before touching any output
  // (README "What Forward must check"). Reuse an output slot that already has
  // the right shape, never modify an input, and run the items on the
  // engine's threads with ParallelForEach (README "Computing a batch").
  // ---- your code begins ----
  if (inputs.empty()) return InferStatus::kInferFailedInputEmpty;
  if (outputs.empty()) return InferStatus::kInferFailedOutputEmpty;
  if (inputs.size() != outputs.size()) return InferStatus::kInferFailedInputOutSizeMatchError;
  for (const sftensor& input : inputs) {
    if (!input || input->empty()) return InferStatus::kInferFailedInputEmpty;
  }
  // Every item gets its output first, so that the parallel loop only computes.
  const int64_t batch = static_cast<int64_t>(inputs.size());
  // Wrong: the output shape is built for 1, 2 or 3 dimensions only; a larger
  // item becomes channels x rows x cols.
  for (int64_t i = 0; i < batch; ++i) {
    const ftensor& in = *inputs[i];
    std::vector<uint32_t> shape = in.raw_shapes();
    if (shape.size() > 3) shape = {in.channels(), in.rows(), in.cols()};
    if (!outputs[i] || outputs[i]->raw_shapes() != shape) outputs[i] = TensorCreate(shape);
  }
  ParallelForEach(batch, [&](int64_t i) {
    Sigmoid(inputs[i]->raw_ptr(), outputs[i]->raw_ptr(), inputs[i]->size());
  });
  return InferStatus::kInferSuccess;
  // ---- your code ends ----
}

std::unique_ptr<Layer> SigmoidLayer::Create([[maybe_unused]] const RuntimeOperator& op) {
  // TODO(course5): the creator: what the registry calls to turn an nn.Sigmoid
  // or F.sigmoid operator into a layer (README "The registry"). It owns no raw
  // pointer.
  // ---- your code begins ----
  return std::make_unique<SigmoidLayer>();
  // ---- your code ends ----
}

// TODO(course5): register the creator under both PNNX type names, so that
// RuntimeGraph::Build finds it for every nn.Sigmoid and F.sigmoid operator.
// The registration must happen before main() runs, without anyone calling a
// function of this file (README "The registry").
// ---- your code begins ----
namespace {

// A global object whose constructor registers: it runs before main().
LayerRegistererWrapper kSigmoidRegistration({"nn.Sigmoid", "F.sigmoid"}, SigmoidLayer::Create);

}  // namespace
// ---- your code ends ----

}  // namespace kuiper
