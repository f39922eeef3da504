// Processes simulated by threads of one test: a rwd::training::BatchExchange whose all_gather
// copies each member's part into a shared buffer between barriers, so a minibatch split over N
// "processes" runs in one test binary.
//
//   rwd::testing::ThreadGroup group(3);
//   group.run([&](int rank, const rwd::training::BatchExchange& exchange) { … });
#pragma once

#include <barrier>
#include <cstring>
#include <functional>
#include <span>
#include <thread>
#include <vector>

#include "rewind/neural/batch_exchange.hpp"

namespace rwd::testing {

// `size` threads of one process acting as processes: all_gather copies each one's part into a
// shared buffer between two barriers.
class ThreadGroup {
 public:
  explicit ThreadGroup(int size) : size_(size), sync_(size) {}

  class Member final : public training::BatchExchange {
   public:
    Member(ThreadGroup& group, int rank) : group_(group), rank_(rank) {}
    int rank() const override { return rank_; }
    int size() const override { return group_.size_; }
    void all_gather(std::span<const double> mine, std::span<const int> counts,
                    std::span<double> all) const override {
      std::size_t offset = 0;
      for (int r = 0; r < rank_; ++r) offset += static_cast<std::size_t>(counts[r]);
      if (rank_ == 0) group_.buffer_.assign(all.size(), 0.0);
      group_.sync_.arrive_and_wait();  // the buffer is sized
      std::memcpy(group_.buffer_.data() + offset, mine.data(), mine.size() * sizeof(double));
      group_.sync_.arrive_and_wait();  // every part is in
      std::memcpy(all.data(), group_.buffer_.data(), all.size() * sizeof(double));
      group_.sync_.arrive_and_wait();  // everyone has read it
    }

   private:
    ThreadGroup& group_;
    int rank_;
  };

  // Runs body(rank, exchange) on `size` threads and waits for them.
  void run(const std::function<void(int, const training::BatchExchange&)>& body) {
    std::vector<std::thread> threads;
    for (int r = 0; r < size_; ++r)
      threads.emplace_back([this, r, &body] {
        Member member(*this, r);
        body(r, member);
      });
    for (auto& t : threads) t.join();
  }

 private:
  int size_;
  std::barrier<> sync_;
  std::vector<double> buffer_;
};

}  // namespace rwd::testing
