// tests/cpp/l3_host_heap.cpp — white-box tests of the L3 host heap (src/hierarchical/host_heap.h).
//
// Contract: first-fit, 64-byte aligned blocks from a free list that coalesces neighbours; a
// block returns once its owner released it AND its last user finished; alloc_wait waits (to a
// deadline) only while some released block still has users; bad pointers get INVALID_ARGUMENT.
// host_heap.cpp is compiled in with PTO_DEBUG_CHECKS, so every alloc and free also checks the
// free list (sorted, non-overlapping, coalesced, tiling the heap with the live blocks).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "hierarchical/host_heap.h"
#include "pto/error.h"
#include "pto_platform/clock.h"

namespace {

using pto::l3::HostHeap;
using Block = HostHeap::Block;

constexpr uint64_t kHeap = 64 * 1024;

TEST(HostHeap, RoundsUpToSixtyFourBytesAndAlignsEveryBlock) {
  HostHeap h(kHeap);
  EXPECT_EQ(h.capacity(), kHeap);
  Block *a = h.try_alloc(1);
  Block *b = h.try_alloc(0);  // an empty request still gets a distinct block
  Block *c = h.try_alloc(65);
  ASSERT_TRUE(a && b && c);
  EXPECT_EQ(a->size, 64u);
  EXPECT_EQ(b->size, 64u);
  EXPECT_EQ(c->size, 128u);
  for (const Block *x : {a, b, c}) {
    EXPECT_EQ(reinterpret_cast<uintptr_t>(h.address(x)) % HostHeap::kAlign, 0u);
    EXPECT_EQ(x->offset % HostHeap::kAlign, 0u);
  }
  EXPECT_EQ(a->offset, 0u);  // first fit: back to back from the start
  EXPECT_EQ(b->offset, 64u);
  EXPECT_EQ(c->offset, 128u);
  EXPECT_EQ(h.in_use(), 256u);
  h.check_invariants();
}

// Found writing tests/fuzz/fuzz_l3 (its oracle reads find): a range starting inside the heap
// and running past its end (or starting before it and reaching in) was taken for memory outside
// the heap: accepted, with its heap bytes untracked. It is refused like a range across blocks.
TEST(HostHeap, ARangeAcrossEitherEndOfTheHeapIsRefused) {
  HostHeap h(kHeap);
  Block *last = h.try_alloc(kHeap);  // the whole heap: its end is the heap's end
  ASSERT_TRUE(last);
  const char *base = static_cast<const char *>(h.address(last));
  EXPECT_EQ(h.find(base + kHeap - 8, 8), last);
  for (const auto &[p, n] : {std::pair<const char *, uint64_t>{base + kHeap - 8, 16}, {base - 8, 16},
                             {base + 8, UINT64_MAX}}) {
    try {
      h.find(p, n);
      FAIL() << "a range of " << n << " bytes at heap offset " << (p - base) << " was accepted";
    } catch (const pto::Error &e) {
      EXPECT_EQ(e.code(), PTO_INVALID_ARGUMENT) << e.what();
    }
  }
  EXPECT_EQ(h.find(base - 8, 8), nullptr);          // wholly before the heap
  EXPECT_EQ(h.find(base + kHeap, 64), nullptr);     // wholly after it
  h.release(last);
  h.check_invariants();
}

TEST(HostHeap, ACapacityIsRoundedToPagesAndTooSmallIsATypedError) {
  HostHeap h(5000);
  EXPECT_EQ(h.capacity(), 8192u);
  try {
    HostHeap tiny(63);
    FAIL() << "a 63-byte heap was accepted";
  } catch (const pto::Error &e) {
    EXPECT_EQ(e.code(), PTO_INVALID_ARGUMENT);
    EXPECT_NE(std::string(e.what()).find("63 bytes"), std::string::npos) << e.what();
  }
}

TEST(HostHeap, ExhaustionReturnsNullWithoutWaitingWhenNothingWillComeBack) {
  HostHeap h(kHeap);
  Block *all = h.try_alloc(kHeap);
  ASSERT_NE(all, nullptr);
  EXPECT_EQ(h.try_alloc(1), nullptr);
  const uint64_t t0 = pto::platform_now_ns();
  // Nothing released-with-users: alloc_wait gives up at once, whatever the deadline.
  EXPECT_EQ(h.alloc_wait(1, t0 + 60ull * 1000 * 1000 * 1000), nullptr);
  EXPECT_LT(pto::platform_now_ns() - t0, 30ull * 1000 * 1000 * 1000);  // generous: it did not wait it out
  EXPECT_EQ(h.try_alloc(kHeap + 1), nullptr);                          // larger than the heap
  h.release(all);
  EXPECT_EQ(h.in_use(), 0u);
  EXPECT_NE(h.try_alloc(kHeap), nullptr);
  h.check_invariants();
}

TEST(HostHeap, FreedNeighboursCoalesceSoALargeBlockFitsAgain) {
  HostHeap h(kHeap);
  std::vector<Block *> b;
  for (int i = 0; i < 16; ++i) b.push_back(h.try_alloc(kHeap / 16));
  for (Block *x : b) ASSERT_NE(x, nullptr);
  EXPECT_EQ(h.try_alloc(64), nullptr);
  // Free every other block: half the heap is free, in 4 KiB holes: 8 KiB does not fit.
  for (int i = 0; i < 16; i += 2) h.release(b[static_cast<size_t>(i)]);
  EXPECT_EQ(h.in_use(), kHeap / 2);
  EXPECT_EQ(h.try_alloc(kHeap / 8), nullptr);
  h.check_invariants();
  // Free block 5: holes 4, 5, 6 merge into one 12 KiB hole (coalesced with both neighbours).
  h.release(b[5]);
  h.check_invariants();
  Block *big = h.try_alloc(3 * kHeap / 16);
  ASSERT_NE(big, nullptr);
  EXPECT_EQ(big->offset, 4 * kHeap / 16);
  // First fit: a small block goes to the lowest hole.
  Block *small = h.try_alloc(64);
  ASSERT_NE(small, nullptr);
  EXPECT_EQ(small->offset, 0u);
  h.release(small);
  h.release(big);
  for (int i = 1; i < 16; i += 2)
    if (i != 5) h.release(b[static_cast<size_t>(i)]);
  EXPECT_EQ(h.in_use(), 0u);
  h.check_invariants();
  EXPECT_NE(h.try_alloc(kHeap), nullptr);  // one hole again: the whole heap
}

TEST(HostHeap, ABlockReturnsOnlyWhenReleasedAndUnused) {
  HostHeap h(kHeap);
  Block *b = h.try_alloc(kHeap);
  h.add_user(b);
  h.add_user(b);
  h.release(b);  // owner let go, two tasks still use it
  EXPECT_EQ(h.in_use(), kHeap);
  EXPECT_EQ(h.awaiting_users(), kHeap);
  h.drop_user(b);
  EXPECT_EQ(h.try_alloc(64), nullptr);
  h.drop_user(b);  // the last user: now it is free
  EXPECT_EQ(h.in_use(), 0u);
  EXPECT_EQ(h.awaiting_users(), 0u);
  Block *c = h.try_alloc(64);
  ASSERT_NE(c, nullptr);
  h.add_user(c);
  h.drop_user(c);  // not released: stays
  EXPECT_EQ(h.in_use(), 64u);
}

TEST(HostHeap, AllocWaitGetsTheBlockItsLastUserFrees) {
  HostHeap h(kHeap);
  Block *b = h.try_alloc(kHeap);
  h.add_user(b);
  h.release(b);
  std::thread user([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    h.drop_user(b);
  });
  Block *c = h.alloc_wait(kHeap / 2, pto::platform_now_ns() + 30ull * 1000 * 1000 * 1000);
  user.join();
  ASSERT_NE(c, nullptr) << "alloc_wait gave up although the block came back";
  EXPECT_EQ(c->offset, 0u);
}

TEST(HostHeap, AllocWaitGivesUpAtItsDeadline) {
  HostHeap h(kHeap);
  Block *b = h.try_alloc(kHeap);
  h.add_user(b);
  h.release(b);  // will come back, but not before the deadline
  EXPECT_EQ(h.alloc_wait(64, pto::platform_now_ns() + 5 * 1000 * 1000), nullptr);
  h.drop_user(b);
  EXPECT_NE(h.alloc_wait(64, pto::platform_now_ns()), nullptr);
}

TEST(HostHeap, BadPointersAreTypedErrors) {
  HostHeap h(kHeap);
  Block *a = h.try_alloc(128);
  Block *b = h.try_alloc(128);
  const char *pa = static_cast<const char *>(h.address(a));
  EXPECT_EQ(h.find(pa, 128), a);
  EXPECT_EQ(h.find(pa + 64, 64), a);  // inside one block
  int outside = 0;
  EXPECT_EQ(h.find(&outside, sizeof outside), nullptr);  // not in the heap at all
  auto code_of = [](auto fn) {
    try {
      fn();
    } catch (const pto::Error &e) {
      return e.code();
    }
    return PTO_OK;
  };
  EXPECT_EQ(code_of([&] { h.find(pa + 64, 128); }), PTO_INVALID_ARGUMENT);    // spans a and b
  EXPECT_EQ(code_of([&] { h.find(pa + 1024, 8); }), PTO_INVALID_ARGUMENT);    // in no live block
  EXPECT_EQ(code_of([&] { h.release_ptr(pa + 64); }), PTO_INVALID_ARGUMENT);  // not a block start
  EXPECT_EQ(code_of([&] { h.release_ptr(&outside); }), PTO_INVALID_ARGUMENT);
  h.release_ptr(pa);
  EXPECT_EQ(code_of([&] { h.release_ptr(pa); }), PTO_INVALID_ARGUMENT);  // twice
  h.release(b);
  EXPECT_EQ(h.in_use(), 0u);
}

// Random alloc/free against a model of live ranges: blocks never overlap, stay inside the heap,
// and once everything is freed the heap is one hole again.
TEST(HostHeap, RandomAllocAndFreeKeepTheFreeListExact) {
  HostHeap h(kHeap);
  std::mt19937 rng(3);
  std::vector<Block *> live;
  int fails = 0;
  for (int step = 0; step < 20000; ++step) {
    if (live.empty() || rng() % 2 == 0) {
      Block *b = h.try_alloc(1 + rng() % 4000);
      if (!b) {
        ++fails;
        continue;
      }
      ASSERT_LE(b->offset + b->size, h.capacity());
      for (const Block *x : live)
        ASSERT_TRUE(b->offset + b->size <= x->offset || x->offset + x->size <= b->offset) << "step " << step;
      live.push_back(b);
    } else {
      const size_t i = rng() % live.size();
      h.release(live[i]);
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
    }
    uint64_t sum = 0;
    for (const Block *x : live) sum += x->size;
    ASSERT_EQ(h.in_use(), sum);
  }
  EXPECT_GT(fails, 0) << "the heap never filled";
  for (Block *x : live) h.release(x);
  h.check_invariants();
  EXPECT_NE(h.try_alloc(kHeap), nullptr);
}

}  // namespace
