// nn.SiLU and F.silu: y = x / (1 + e^-x) (the arithmetic is in activation.cpp).
// After a convolution the graph fuses it into the convolution instead.
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
    // One contiguous range per thread; a small item on the calling thread.
    ParallelRanges(
        n, n >= kParallelElements ? MaxThreads() : 1,
        [&](int64_t begin, int64_t end, int) { SiluSpan(x + begin, y + begin, end - begin); });
  }
};

std::unique_ptr<Layer> CreateSilu(const RuntimeOperator&) { return std::make_unique<SiluLayer>(); }

LayerRegistererWrapper kSiluRegistration({"nn.SiLU", "F.silu"}, CreateSilu);

}  // namespace
}  // namespace kuiper
