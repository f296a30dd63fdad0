// RuntimeOptions: what RuntimeGraph::Build may do, handed to it by the caller
// (ncnn's Option plays the same part). The graph keeps a copy, and gives one
// to every operator before its layer is created, so a creator reads what
// applies to its layer from the operator it is given. Nothing here is read
// from a global or the environment: two graphs built at the same time with
// different options do not see each other's.
//
//   RuntimeOptions options;
//   options.winograd_conv = false;  // 3x3 convolutions through im2col
//   options.direct_conv = false;    // and the others too: every one runs lab 6's code
//   graph.Build(options);
#pragma once

#include <cstdint>
#include <functional>

namespace kuiper {

struct RuntimeOptions {
  // The convolution routes a layer may take besides im2col, the route lab
  // course6 writes, which is always allowed. Each route is chosen only where
  // the layer's shape fits it (GroupKernels, layers/convolution.hpp); with
  // both off, every convolution but the 1x1 stride-1 ones (whose input is
  // their im2col matrix) runs the lab's FillBlock.
  bool winograd_conv = true;  // F(2x2, 3x3): 3x3 stride-1 layers of 16 to 512 channels
  bool direct_conv = true;    // small outputs or few channels, on CPUs with AVX-512
  // Within the Winograd route, F(4x4, 3x3) instead of F(2x2, 3x3) for layers
  // of up to 256 x 256 channels (GroupKernels): faster on every such layer,
  // but its larger transform constants round several times as much as
  // im2col, which leaves ResNet18's output no closer to float64 than
  // PyTorch's float32, and further on some inputs
  // (docs/performance.md#winograd-f4). Off by default for that.
  bool winograd_f4 = false;

  // Activation memory planning (RuntimeGraph::PlanOutputs): operands that are
  // not live at the same time share the bytes of one buffer. Off, each
  // operand owns its tensors.
  bool buffer_planning = true;

  // The fusions Build makes. fuse_activations: a ReLU or SiLU whose input
  // only it reads is applied by the layer that produces that input (a
  // convolution's epilogue, an expression's result), and its own operator
  // only hands the tensors on. concat_in_place (with buffer_planning): the
  // parts of a torch.cat along the channels are computed straight into the
  // joined tensor, which then has nothing to copy.
  bool fuse_activations = true;
  bool concat_in_place = true;

  // The most bytes the graph's weights and activations may take at any
  // batch (Build, and Forward at a new batch, throw ResourceError above it).
  // 0: MemoryLimit() (memory_limit.hpp), the process-wide limit that the
  // file readers apply while Build loads the model.
  uint64_t memory_limit = 0;

  // The most threads this graph's Build and Forward use (a ThreadLimit,
  // parallel.hpp); 0: no limit of its own. It lowers the process-wide count
  // (SetMaxThreads, every core by default) and never raises it.
  int threads = 0;

  // Called by Build after it has freed each 8 MB of raw weights (the layers
  // hold their own copies), and once at its end. The allocator's policy is
  // the program's, not the library's: the kuiper CLI passes glibc's
  // malloc_trim, which gives the freed pages back so that the next layers'
  // copies do not raise the peak (docs/performance.md#graph-memory). Empty:
  // nothing is called.
  std::function<void()> weights_freed;
};

}  // namespace kuiper
