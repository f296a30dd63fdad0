// Who owns the CPU cores: the engine's loops (parallel.hpp) or OpenBLAS's own threads.
//
// A layer that runs BLAS calls inside a parallel loop must keep BLAS on one
// thread, or 2 engine threads x 2 OpenBLAS threads fight over 2 cores. The
// library therefore sets OpenBLAS to one thread when it loads
// (blas_threads.cpp): the engine's pool is its only one.
#pragma once

namespace kuiper {

// OpenBLAS's thread count, or 1 when the BLAS in use is not OpenBLAS.
int BlasThreads();

// Sets OpenBLAS's thread count for the whole process, while it lives, and
// restores the previous count when destroyed. Without OpenBLAS it does nothing.
class BlasThreadScope {
 public:
  explicit BlasThreadScope(int threads);
  ~BlasThreadScope();
  BlasThreadScope(const BlasThreadScope&) = delete;
  BlasThreadScope& operator=(const BlasThreadScope&) = delete;

 private:
  int previous_;
};

}  // namespace kuiper
