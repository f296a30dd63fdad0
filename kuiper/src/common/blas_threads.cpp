#include "kuiper/blas_threads.hpp"

// OpenBLAS's thread controls. Weak, because Armadillo may sit on another BLAS
// (reference BLAS, BLIS): then the symbols stay null and threading is left
// alone. With Debian's libopenblas0-pthread they resolve to libopenblas.so.0,
// which Armadillo's wrapper loads and which also backs libblas.so.3.
extern "C" {
void openblas_set_num_threads(int threads) __attribute__((weak));
int openblas_get_num_threads() __attribute__((weak));
}

namespace kuiper {
namespace {

// The engine's pool (parallel.hpp) is its one set of threads (batch items,
// Im2Col columns, GEMM parts, large element-wise loops), and OpenBLAS runs
// single-threaded inside it. Left at its default, OpenBLAS keeps a pool of its
// own whose threads busy-wait after every call and take the cores from the
// next loop (docs/performance.md#layer-kernels).
// Set once when the library loads (OpenBLAS has initialised by then).
const int kSingleThreadedBlas = [] {
  if (openblas_set_num_threads) openblas_set_num_threads(1);
  return 1;
}();

}  // namespace

int BlasThreads() { return openblas_get_num_threads ? openblas_get_num_threads() : 1; }

BlasThreadScope::BlasThreadScope(int threads) : previous_(BlasThreads()) {
  if (openblas_set_num_threads && threads != previous_) openblas_set_num_threads(threads);
}

BlasThreadScope::~BlasThreadScope() {
  if (openblas_set_num_threads && BlasThreads() != previous_) openblas_set_num_threads(previous_);
}

}  // namespace kuiper
