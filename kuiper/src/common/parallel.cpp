// The engine's thread pool (parallel.hpp).
//
// Why not OpenMP: a libgomp thread that waits (at the end of a loop, or for
// the next one) spins for 300,000 rounds, a few milliseconds, before it
// sleeps, and a program cannot shorten that: only GOMP_SPINCOUNT and
// OMP_WAIT_POLICY can, read once when libgomp loads. On an idle machine the
// spinning costs nothing. On a busy one, the thread that spins holds a core
// while the thread it waits for is not running, and each of the hundred or so
// loops of a forward pass can cost a time slice: ResNet18 on 2 threads ran 10x
// slower than on 1 (docs/performance.md#shared-machine). This pool differs in
// two ways:
// - a thread with nothing to do checks for work for kSpin, about the gap
//   between two loops of a forward pass, so that on an idle machine the next
//   loop finds it awake; then it sleeps (std::atomic::wait, a futex);
// - parts are claimed, not assigned: the calling thread runs every part that
//   no other thread has started, so it waits only for parts in progress, never
//   for a thread that has not been scheduled yet.
// OpenMP stays for `#pragma omp simd`, and because Debian's oneDNN runs its
// GEMM on OpenMP threads: the pool's threads, and the caller while it runs
// parts, keep OpenMP's thread count at 1, so oneDNN computes on the calling
// thread and the engine never starts an OpenMP team.
#include "kuiper/parallel.hpp"

#include <omp.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <mutex>
#include <thread>

namespace kuiper {
namespace {

// How long an idle thread keeps checking for work before it sleeps
// (docs/performance.md#shared-machine).
constexpr std::chrono::microseconds kSpin{50};
constexpr int kMostThreads = 64;
// The claim word keeps a job's thread count and unclaimed parts in 16 bits each.
constexpr int64_t kMostParts = 0xffff;

int CoresAvailable() {
  static const int cores = [] {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
    return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  }();
  return cores;
}

std::atomic<int> process_threads{0};  // SetMaxThreads's count; 0: every core
thread_local int thread_limit = 0;    // ThreadLimit's; 0: none
thread_local bool in_body = false;    // this thread is running a part

void Relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Checks `done` for up to kSpin; whether it became true.
template <typename Done>
bool SpinUntil(const Done& done) {
  const auto until = std::chrono::steady_clock::now() + kSpin;
  for (int round = 1;; ++round) {
    if (done()) return true;
    Relax();
    if (round % 64 == 0 && std::chrono::steady_clock::now() > until) return done();
  }
}

// For a scope: this thread runs parts, so loops inside them do not nest, and
// OpenMP regions inside them (oneDNN's) stay on this thread.
class PartScope {
 public:
  PartScope() : was_in_body_(in_body), openmp_threads_(omp_get_max_threads()) {
    in_body = true;
    if (openmp_threads_ != 1) omp_set_num_threads(1);
  }
  ~PartScope() {
    in_body = was_in_body_;
    if (openmp_threads_ != 1) omp_set_num_threads(openmp_threads_);
  }
  PartScope(const PartScope&) = delete;
  PartScope& operator=(const PartScope&) = delete;

 private:
  bool was_in_body_;
  int openmp_threads_;
};

class Pool {
 public:
  // Runs the parts on `threads` threads, the caller as slot 0, and returns the
  // first exception a part threw. False, having run nothing, while another
  // thread's job holds the pool.
  bool Run(int64_t n, int64_t parts, int threads, const RangeBody& body,
           std::exception_ptr& error) {
    std::unique_lock<std::mutex> lock(running_, std::try_to_lock);
    if (!lock) return false;
    for (; workers_ + 1 < threads; ++workers_) {
      std::thread([this, slot = workers_ + 1] { Work(slot); }).detach();
    }
    body_ = &body, n_ = n, parts_ = parts, error_ = nullptr;
    unfinished_.store(static_cast<uint32_t>(parts), std::memory_order_relaxed);
    claim_.store(static_cast<uint32_t>(threads) << 16 | static_cast<uint32_t>(parts),
                 std::memory_order_release);
    claim_.notify_all();
    {
      PartScope scope;
      TakeParts(0);
    }
    for (uint32_t left; (left = unfinished_.load(std::memory_order_acquire)) != 0;) {
      if (!SpinUntil([&] { return unfinished_.load(std::memory_order_acquire) == 0; })) {
        unfinished_.wait(left, std::memory_order_acquire);
      }
    }
    error = error_;
    return true;
  }

 private:
  // A worker: sleeps until a job is published, then claims parts.
  void Work(int slot) {
    in_body = true;  // for good: a worker only ever runs parts
    omp_set_num_threads(1);
    uint32_t seen = 0;
    for (;;) {
      if (!SpinUntil([&] { return claim_.load(std::memory_order_acquire) != seen; })) {
        claim_.wait(seen, std::memory_order_acquire);
      }
      seen = TakeParts(slot);
    }
  }

  // Claims and runs the current job's parts while there are any for `slot`;
  // returns the claim word it saw last.
  uint32_t TakeParts(int slot) {
    uint32_t word = claim_.load(std::memory_order_acquire);
    for (;;) {
      const uint32_t threads = word >> 16, left = word & 0xffff;
      if (left == 0 || static_cast<uint32_t>(slot) >= threads) return word;
      if (claim_.compare_exchange_weak(word, word - 1, std::memory_order_acq_rel,
                                       std::memory_order_acquire)) {
        // The part is ours: until it is done the caller waits, so the job's
        // fields stay as they are.
        RunPart(left - 1, slot);
        word = claim_.load(std::memory_order_acquire);
      }
    }
  }

  void RunPart(int64_t part, int slot) {
    try {
      (*body_)(n_ * part / parts_, n_ * (part + 1) / parts_, slot);
    } catch (...) {
      const std::lock_guard<std::mutex> guard(error_mutex_);
      if (!error_) error_ = std::current_exception();
    }
    if (unfinished_.fetch_sub(1, std::memory_order_acq_rel) == 1) unfinished_.notify_one();
  }

  std::mutex running_;  // one job at a time
  int workers_ = 0;     // threads started, slots 1 to workers_
  // The job's thread count (high 16 bits) and its unclaimed parts (low 16).
  std::atomic<uint32_t> claim_{0};
  std::atomic<uint32_t> unfinished_{0};  // parts not done yet
  // The job: written before claim_ publishes it, read only by the thread
  // that has claimed one of its parts.
  const RangeBody* body_ = nullptr;
  int64_t n_ = 0, parts_ = 1;
  std::mutex error_mutex_;
  std::exception_ptr error_;
};

// Never destroyed: its threads sleep until the process ends.
Pool& ThePool() {
  static Pool* const pool = new Pool;
  return *pool;
}

}  // namespace

int MaxThreads() {
  if (in_body) return 1;
  int threads = process_threads.load(std::memory_order_relaxed);
  if (threads <= 0) threads = CoresAvailable();
  if (thread_limit > 0) threads = std::min(threads, thread_limit);
  return std::min(threads, kMostThreads);
}

void SetMaxThreads(int threads) {
  process_threads.store(std::max(threads, 0), std::memory_order_relaxed);
}

ThreadLimit::ThreadLimit(int threads) : previous_(thread_limit) {
  if (threads > 0) thread_limit = previous_ > 0 ? std::min(previous_, threads) : threads;
}

ThreadLimit::~ThreadLimit() { thread_limit = previous_; }

void ParallelRanges(int64_t n, int64_t parts, RangeBody body) {
  if (n <= 0) return;
  parts = std::clamp<int64_t>(parts, 1, std::min(n, kMostParts));
  const int threads = static_cast<int>(std::min<int64_t>(MaxThreads(), parts));
  std::exception_ptr error;
  if (threads <= 1 || !ThePool().Run(n, parts, threads, body, error)) {
    // Alone: the same parts, one after another.
    PartScope scope;
    for (int64_t part = 0; part < parts; ++part) {
      try {
        body(n * part / parts, n * (part + 1) / parts, 0);
      } catch (...) {
        if (!error) error = std::current_exception();
      }
    }
  }
  if (error) std::rethrow_exception(error);
}

}  // namespace kuiper
