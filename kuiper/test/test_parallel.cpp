// The engine's thread pool (parallel.hpp): which ranges run, on which slots,
// what an exception does, and that nothing inside starts an OpenMP team.
#include <gtest/gtest.h>
#include <omp.h>

#include <armadillo>
#include <atomic>
#include <filesystem>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include "kuiper/layers/convolution.hpp"
#include "kuiper/parallel.hpp"

namespace kuiper {
namespace {

// Sets the process-wide count for one test and puts the default back.
class PoolThreads {
 public:
  explicit PoolThreads(int threads) { SetMaxThreads(threads); }
  ~PoolThreads() { SetMaxThreads(0); }
};

int ThreadsOfThisProcess() {
  int count = 0;
  for ([[maybe_unused]] const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    ++count;
  }
  return count;
}

TEST(ParallelRanges, PartKIsNTimesKOverPartsToNTimesKPlusOneOverParts) {
  PoolThreads threads(3);
  std::mutex mutex;
  std::set<std::pair<int64_t, int64_t>> ranges;
  ParallelRanges(10, 4, [&](int64_t begin, int64_t end, int) {
    const std::lock_guard<std::mutex> lock(mutex);
    ranges.insert({begin, end});
  });
  // 10 * k / 4 for k = 0..4: 0, 2, 5, 7, 10.
  const std::set<std::pair<int64_t, int64_t>> expected = {{0, 2}, {2, 5}, {5, 7}, {7, 10}};
  EXPECT_EQ(ranges, expected);
}

TEST(ParallelRanges, MorePartsThanItemsGiveOneItemEach) {
  PoolThreads threads(2);
  std::vector<std::atomic<int>> calls(3);
  ParallelRanges(3, 8, [&](int64_t begin, int64_t end, int) {
    EXPECT_EQ(end, begin + 1);
    ++calls[begin];
  });
  for (const std::atomic<int>& count : calls) EXPECT_EQ(count.load(), 1);
}

TEST(ParallelFor, EveryIndexRunsOnceOnMoreThreadsThanCores) {
  PoolThreads threads(8);  // more threads than the machine has cores
  std::vector<std::atomic<int>> calls(100000);
  for (int round = 0; round < 20; ++round)
    ParallelFor(calls.size(), [&](int64_t i) { ++calls[i]; });
  for (const std::atomic<int>& count : calls) ASSERT_EQ(count.load(), 20);
}

TEST(ParallelRanges, SlotsAreBelowTheThreadCountAndTheCallerIsSlotZero) {
  PoolThreads threads(3);
  const std::thread::id caller = std::this_thread::get_id();
  std::mutex mutex;
  std::set<int> slots;
  ParallelRanges(3000, 30, [&](int64_t, int64_t, int slot) {
    const std::lock_guard<std::mutex> lock(mutex);
    slots.insert(slot);
    if (std::this_thread::get_id() == caller) EXPECT_EQ(slot, 0);
    if (std::this_thread::get_id() != caller) EXPECT_NE(slot, 0);
  });
  EXPECT_LT(*slots.rbegin(), 3);
}

TEST(ParallelRanges, FirstExceptionIsRethrownAfterEveryOtherPartRan) {
  PoolThreads threads(2);
  std::atomic<int> ran = 0;
  EXPECT_THROW(ParallelRanges(6, 6,
                              [&](int64_t begin, int64_t, int) {
                                ++ran;
                                if (begin == 3) throw std::runtime_error("part 3");
                              }),
               std::runtime_error);
  EXPECT_EQ(ran.load(), 6);
}

TEST(ParallelRanges, AloneTheSamePartsRunOneAfterAnother) {
  PoolThreads threads(1);
  std::vector<std::pair<int64_t, int64_t>> ranges;  // no lock: one thread
  ParallelRanges(5, 2, [&](int64_t begin, int64_t end, int slot) {
    EXPECT_EQ(slot, 0);
    ranges.push_back({begin, end});
  });
  const std::vector<std::pair<int64_t, int64_t>> expected = {{0, 2}, {2, 5}};
  EXPECT_EQ(ranges, expected);
}

TEST(ParallelFor, ALoopInsideABodyRunsOnTheThreadOfThatBody) {
  PoolThreads threads(2);
  std::atomic<int> wrong = 0;
  ParallelFor(4, [&](int64_t) {
    EXPECT_EQ(MaxThreads(), 1);
    const std::thread::id outer = std::this_thread::get_id();
    ParallelFor(100, [&](int64_t) {
      if (std::this_thread::get_id() != outer) ++wrong;
    });
  });
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(MaxThreads(), 2);
}

TEST(ThreadLimit, LowersTheCountInScopeOnly) {
  PoolThreads threads(4);
  {
    const ThreadLimit limit(2);
    EXPECT_EQ(MaxThreads(), 2);
    const ThreadLimit wider(3);  // a limit never raises an outer one
    EXPECT_EQ(MaxThreads(), 2);
  }
  EXPECT_EQ(MaxThreads(), 4);
}

TEST(ParallelRanges, TwoCallersAtOnceBothFinishEveryPart) {
  PoolThreads threads(2);
  std::vector<std::atomic<int>> a(50000), b(50000);
  std::thread other([&] {
    for (int round = 0; round < 50; ++round) ParallelFor(b.size(), [&](int64_t i) { ++b[i]; });
  });
  for (int round = 0; round < 50; ++round) ParallelFor(a.size(), [&](int64_t i) { ++a[i]; });
  other.join();
  for (size_t i = 0; i < a.size(); ++i) ASSERT_TRUE(a[i] == 50 && b[i] == 50) << i;
}

TEST(ParallelRanges, OpenMpRunsOnOneThreadInsideABodyAndIsRestoredAfter) {
  PoolThreads threads(2);
  omp_set_num_threads(2);
  std::atomic<int> above_one = 0;
  ParallelRanges(8, 8, [&](int64_t, int64_t, int) {
    if (omp_get_max_threads() != 1) ++above_one;
  });
  EXPECT_EQ(above_one.load(), 0);
  EXPECT_EQ(omp_get_max_threads(), 2);
}

// oneDNN's GEMM uses OpenMP threads when it is called with more than one: a
// large product through MultiplyInto must not add a thread beyond the pool's.
TEST(ParallelRanges, ALargeProductStartsNoThreadBeyondThePool) {
  PoolThreads threads(2);
  omp_set_num_threads(2);
  ParallelFor(2, [](int64_t) {});  // the pool's threads exist from here on
  const int before = ThreadsOfThisProcess();
  arma::fmat a(512, 256, arma::fill::randu), b(256, 300, arma::fill::randu);
  std::vector<float> product(512 * 300);
  MultiplyInto(a, b, product.data());
  EXPECT_EQ(ThreadsOfThisProcess(), before);
  // 256 products of numbers in [0, 1): float sums that far apart differ by
  // well under 1e-3.
  const arma::fmat expected = a * b;
  EXPECT_LT(arma::abs(arma::fmat(product.data(), 512, 300, false) - expected).max(), 1e-3f);
}

}  // namespace
}  // namespace kuiper
