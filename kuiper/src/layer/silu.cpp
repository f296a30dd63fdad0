// nn.SiLU and F.silu: y = x / (1 + e^-x) (the arithmetic is in activation.cpp).
// After a convolution the graph fuses it into the convolution instead.
#include <omp.h>

#include "kuiper/layers/activation.hpp"
#include "kuiper/layers/elementwise.hpp"

namespace kuiper {
namespace {

class SiluLayer : public ElementwiseLayer {
 public:
  SiluLayer() : ElementwiseLayer("SiLU") {}

 protected:
  void Apply(const ftensor& input, ftensor& output) const override {
    const float* x = input.raw_ptr();
    float* y = output.raw_ptr();
    const int64_t n = input.size();
    // Inside a batch's parallel loop, or for a small item, this thread does it all.
    if (n < kParallelElements || omp_in_parallel()) return SiluSpan(x, y, n);
    // Otherwise one contiguous chunk per thread.
    const int threads = omp_get_max_threads();
#pragma omp parallel for schedule(static)
    for (int t = 0; t < threads; ++t) {
      const int64_t first = n * t / threads, last = n * (t + 1) / threads;
      SiluSpan(x + first, y + first, last - first);
    }
  }
};

std::unique_ptr<Layer> CreateSilu(const RuntimeOperator&) { return std::make_unique<SiluLayer>(); }

LayerRegistererWrapper kSiluRegistration({"nn.SiLU", "F.silu"}, CreateSilu);

}  // namespace
}  // namespace kuiper
