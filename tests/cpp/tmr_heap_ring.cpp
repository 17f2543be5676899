// tests/cpp/tmr_heap_ring.cpp — white-box tests of the tensormap runtime's heap ring
// (src/runtime/tensormap_and_ringbuffer/aicpu/heap_ring.h), driven directly: no device, no worker.
//
// Contract: buffers are placed back to back and never straddle the ring's end (they move to its
// start, the skipped bytes counted as padding); they come back only in allocation order, once
// their scope ended and the tasks submitted by then retired; fits() says whether one fits now
// (else the orchestrator waits: back-pressure), could_fit() whether it ever can while the open
// scopes hold what they hold (else the orchestrator fails with RING_CAPACITY at once).
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "heap_ring.h"

namespace {

using pto::tmr::HeapRing;

TEST(HeapRing, PlacesBuffersBackToBack) {
  HeapRing h(1024);
  EXPECT_EQ(h.allocate(256), 0u);
  EXPECT_EQ(h.allocate(128), 256u);
  EXPECT_EQ(h.allocate(64), 384u);
  EXPECT_EQ(h.used(), 448u);
  EXPECT_EQ(h.top(), 448u);
  EXPECT_EQ(h.tail(), 0u);
  EXPECT_TRUE(h.holds(256, 128));
  EXPECT_TRUE(h.holds(256, 100));   // a view of part of it
  EXPECT_FALSE(h.holds(256, 129));  // more than the buffer
  EXPECT_FALSE(h.holds(300, 1));    // not the start of a buffer
}

TEST(HeapRing, ABufferThatWouldStraddleTheEndStartsAtTheBeginning) {
  HeapRing h(1024);
  h.allocate(768);
  h.close_scope(0, 1);
  h.reclaim(1);  // the 768 bytes are back
  EXPECT_EQ(h.tail(), 768u);
  EXPECT_EQ(h.need(256), 256u);  // exactly up to the end: no padding
  EXPECT_EQ(h.need(512), 256u + 512u);
  EXPECT_TRUE(h.fits(512));
  EXPECT_EQ(h.allocate(512), 0u);  // wrapped: 256 bytes of padding, then the buffer at 0
  EXPECT_EQ(h.top(), 768u + 256u + 512u);
  EXPECT_EQ(h.used(), 768u);
  EXPECT_FALSE(h.fits(512));  // 256 free (512..768), not 512
  EXPECT_TRUE(h.fits(256));
  EXPECT_EQ(h.allocate(256), 512u);
  EXPECT_EQ(h.used(), 1024u);
  EXPECT_FALSE(h.fits(64));  // full
  EXPECT_TRUE(h.holds(0, 512));
  EXPECT_TRUE(h.holds(512, 256));
}

TEST(HeapRing, BuffersComeBackInAllocationOrderOnly) {
  HeapRing h(4096);
  const uint64_t outer = h.next_index();
  h.allocate(1024);  // outer scope's buffer: the scope stays open
  const uint64_t inner = h.next_index();
  h.allocate(1024);
  h.allocate(1024);
  h.close_scope(inner, 5);  // inner scope ended after 5 tasks were submitted
  h.reclaim(100);           // everyone retired, but the outer buffer is still held...
  EXPECT_EQ(h.tail(), 0u);  // ...so nothing after it comes back either
  EXPECT_EQ(h.live_buffers(), 3u);
  h.close_scope(outer, 9);
  h.reclaim(8);  // tasks 8 still runs: the outer buffer's tasks have not all retired
  EXPECT_EQ(h.tail(), 0u);
  h.reclaim(9);
  EXPECT_EQ(h.tail(), 3072u);
  EXPECT_EQ(h.used(), 0u);
  EXPECT_EQ(h.live_buffers(), 0u);
}

TEST(HeapRing, AnEarlierScopeStillRunningHoldsBackALaterOne) {
  HeapRing h(4096);
  const uint64_t a = h.next_index();
  h.allocate(1024);
  h.close_scope(a, 10);  // scope a's tasks: up to 10
  const uint64_t b = h.next_index();
  h.allocate(1024);
  h.close_scope(b, 3);  // (not possible in a real run, ids grow; order still rules)
  h.reclaim(5);         // a's buffer waits for task 9: b's stays too
  EXPECT_EQ(h.tail(), 0u);
  h.reclaim(10);
  EXPECT_EQ(h.tail(), 2048u);
}

TEST(HeapRing, ClosingAScopeLeavesEarlierBuffersAndStampedOnesAlone) {
  HeapRing h(4096);
  h.allocate(64);  // root scope (index 0), open
  const uint64_t s = h.next_index();
  h.allocate(64);
  const uint64_t nested = h.next_index();
  h.allocate(64);
  h.close_scope(nested, 2);
  h.close_scope(s, 7);  // stamps buffer 1 only: buffer 2 keeps release 2
  h.close_scope(0, 50);
  h.reclaim(2);  // buffer 0 (root) needs 50
  EXPECT_EQ(h.tail(), 0u);
  h.reclaim(50);
  EXPECT_EQ(h.used(), 0u);
}

TEST(HeapRing, ExhaustionWaitsWhenBuffersWillComeBackAndFailsWhenNoneCan) {
  HeapRing h(1024);
  EXPECT_FALSE(h.could_fit(2048));  // larger than the ring: never
  EXPECT_FALSE(h.fits(2048));
  const uint64_t scope = h.next_index();
  h.allocate(512);
  h.allocate(256);
  EXPECT_TRUE(h.fits(256));
  EXPECT_FALSE(h.fits(512));
  EXPECT_FALSE(h.could_fit(512));  // the open scope holds 768 bytes for good
  EXPECT_EQ(h.top() - h.best_tail(), 768u);
  h.close_scope(scope, 4);
  EXPECT_FALSE(h.fits(512));      // not now...
  EXPECT_TRUE(h.could_fit(512));  // ...but once tasks 0..3 retire: the orchestrator waits
  EXPECT_EQ(h.best_tail(), 768u);
  h.reclaim(3);
  EXPECT_FALSE(h.fits(512));
  h.reclaim(4);
  EXPECT_TRUE(h.fits(512));
  EXPECT_EQ(h.allocate(512), 0u);  // 256 pad at 768..1024, then at 0
}

TEST(HeapRing, WrapPaddingCountsAgainstWhatCouldEverFit) {
  HeapRing h(1024);
  const uint64_t first = h.next_index();
  h.allocate(640);
  h.close_scope(first, 1);
  h.reclaim(1);  // tail = top = 640
  const uint64_t open = h.next_index();
  h.allocate(256);  // 640..896, scope open
  (void)open;
  // Free: 128 bytes before the end and 640 at the start, 768 in all; but a buffer never
  // straddles the end, so 768 bytes cannot ever fit while the scope is open, and 640 can.
  EXPECT_EQ(h.need(768), 128u + 768u);
  EXPECT_FALSE(h.could_fit(768));
  EXPECT_TRUE(h.could_fit(640));  // 128 padding + 640 = all that is free
  EXPECT_TRUE(h.could_fit(128));  // before the end, no padding
  EXPECT_TRUE(h.fits(640));
  EXPECT_EQ(h.allocate(640), 0u);
  EXPECT_EQ(h.used(), 1024u);
}

TEST(HeapRingDeathTest, AllocatingWithoutRoomIsABug) {
  HeapRing h(256);
  h.allocate(256);
  EXPECT_DEATH(h.allocate(64), "heap ring: allocate\\(\\) without room");
}

// Random scopes and retirements against a model: live bytes never overlap, every buffer lies
// inside the ring, and what fits() promises allocate() delivers.
TEST(HeapRing, RandomScopesNeverOverlapLiveBuffers) {
  std::mt19937 rng(15);
  for (int round = 0; round < 50; ++round) {
    const uint64_t size = 64 * (16 + rng() % 64);
    HeapRing h(size);
    struct Live {
      uint64_t off, bytes;
      int64_t release;  // -1 open
      size_t scope;
    };
    std::vector<Live> live;  // allocation order
    std::vector<uint64_t> scopes = {h.next_index()};
    int64_t submitted = 0, retired = 0;
    int wraps = 0;
    uint64_t last_off = 0;
    for (int step = 0; step < 2000; ++step) {
      const int op = static_cast<int>(rng() % 8);
      if (op == 0 && scopes.size() < 4) {
        scopes.push_back(h.next_index());
      } else if (op == 1 && scopes.size() > 1) {
        h.close_scope(scopes.back(), submitted);
        for (Live &l : live)
          if (l.scope >= scopes.size() - 1 && l.release < 0) l.release = submitted;
        scopes.pop_back();
      } else if (op <= 4) {
        ++submitted;
      } else if (op == 5) {
        retired = std::min<int64_t>(submitted, retired + static_cast<int64_t>(rng() % 4));
        h.reclaim(retired);
        while (!live.empty() && live.front().release >= 0 && live.front().release <= retired)
          live.erase(live.begin());
      } else {
        const uint64_t bytes = 64 * (1 + rng() % 8);
        if (scopes.size() == 1 || !h.fits(bytes)) continue;  // the root scope never ends here
        const uint64_t off = h.allocate(bytes);
        ASSERT_LE(off + bytes, size);
        ASSERT_EQ(off % 64, 0u);
        if (!live.empty() && off < last_off) ++wraps;
        last_off = off;
        for (const Live &l : live)
          ASSERT_TRUE(off + bytes <= l.off || l.off + l.bytes <= off)
              << "round " << round << " step " << step << ": [" << off << ", +" << bytes << ") over ["
              << l.off << ", +" << l.bytes << ")";
        live.push_back(Live{off, bytes, -1, scopes.size() - 1});
      }
      uint64_t held = 0;
      for (const Live &l : live) held += l.bytes;
      ASSERT_LE(held, h.used());
      ASSERT_LE(h.used(), size);
      ASSERT_EQ(h.live_buffers(), live.size());
      // The indexed look-up (validation's fast path) finds every live buffer, and agrees with
      // the scan everywhere else: at every 64-byte offset of the ring.
      for (const Live &l : live)
        ASSERT_TRUE(h.holds(l.off, l.bytes)) << "round " << round << " step " << step;
      for (uint64_t off = 0; off < size; off += 64)
        ASSERT_EQ(h.holds(off, 64), h.holds_scan(off, 64)) << "round " << round << " step " << step;
    }
    EXPECT_GT(wraps, 0) << "round " << round << ": never wrapped";
  }
}

}  // namespace
