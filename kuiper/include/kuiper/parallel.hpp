// The engine's threads. Every parallel loop of the engine runs through
// ParallelRanges, on a pool of the engine's own rather than OpenMP's: a
// waiting thread spins only briefly and then sleeps, and the calling thread
// takes over the parts that no other thread has started, so a loop never
// waits for a thread the operating system has not scheduled (parallel.cpp
// says why this matters on a busy machine; docs/performance.md#shared-machine
// has the measurements).
#pragma once

#include <cstdint>
#include <memory>
#include <type_traits>

namespace kuiper {

// The threads a loop started on the calling thread may use: SetMaxThreads's
// count (every core the process may run on, by default), lowered by a
// ThreadLimit in scope, and 1 inside a loop's body: loops do not nest.
int MaxThreads();

// The process-wide count; 0 means every core the process may run on.
void SetMaxThreads(int threads);

// Lowers the calling thread's count to `threads` while in scope (0: no limit).
class ThreadLimit {
 public:
  explicit ThreadLimit(int threads);
  ~ThreadLimit();
  ThreadLimit(const ThreadLimit&) = delete;
  ThreadLimit& operator=(const ThreadLimit&) = delete;

 private:
  int previous_;
};

// A reference to a callable body(begin, end, slot), valid while the callable
// lives: enough for ParallelRanges, which returns only when every call is done.
class RangeBody {
 public:
  template <typename Fn, typename = std::enable_if_t<!std::is_same_v<std::decay_t<Fn>, RangeBody>>>
  RangeBody(Fn&& fn)  // NOLINT(google-explicit-constructor): lambdas convert
      : object_(const_cast<void*>(static_cast<const void*>(std::addressof(fn)))),
        call_([](void* object, int64_t begin, int64_t end, int slot) {
          (*static_cast<std::remove_reference_t<Fn>*>(object))(begin, end, slot);
        }) {}

  void operator()(int64_t begin, int64_t end, int slot) const { call_(object_, begin, end, slot); }

 private:
  void* object_;
  void (*call_)(void*, int64_t, int64_t, int);
};

// Cuts [0, n) into `parts` contiguous ranges of (nearly) equal size, part k
// being [n*k/parts, n*(k+1)/parts), and runs body(begin, end, slot) on each,
// on up to MaxThreads() threads, the calling thread among them. Returns when
// every part is done. `slot` (0 .. MaxThreads()-1) names the thread that runs
// the part: parts of one slot run one after another, so scratch memory per
// slot needs no lock. If bodies throw, the other parts still run and the
// first exception is rethrown here. Inside a body, an OpenMP region (oneDNN's
// GEMM, a lab's own `#pragma omp parallel`) runs on its calling thread alone.
void ParallelRanges(int64_t n, int64_t parts, RangeBody body);

// body(i) for every i in [0, n), cut into MaxThreads() parts; all on the
// calling thread when `worth_splitting` is false (too little work to share).
template <typename Fn>
void ParallelFor(int64_t n, Fn&& body, bool worth_splitting = true) {
  ParallelRanges(n, worth_splitting ? MaxThreads() : 1, [&body](int64_t begin, int64_t end, int) {
    for (int64_t i = begin; i < end; ++i) body(i);
  });
}

// body(i) for every i in [0, n), each its own part: for a few large items (the
// items of a batch), which threads then claim one at a time.
template <typename Fn>
void ParallelForEach(int64_t n, Fn&& body) {
  ParallelRanges(n, n, [&body](int64_t begin, int64_t end, int) {
    for (int64_t i = begin; i < end; ++i) body(i);
  });
}

}  // namespace kuiper
