// src/core/mix_sync.h — the runtime side of pto/mix_sync.h: a MIX task's sync block and the waits.
//
// One MixSync per cluster of the run, in device memory the runtime owns (each runtime's
// layout; CorePool::init takes the array). A cluster runs one MIX task at a time, so the block
// is that task's: CorePool::dispatch_mix resets it and points the three parts' call blocks at
// it before the dispatch ring, which publishes both. The three cores running the parts share
// it; each runs kMixOps (the table the core hands its kernel, core/aicore_loop.h) and marks its
// part returned after the kernel (mix_part_returned), before it reports completion, so the
// block is not reused while a part may still touch it.
//
// Concurrency: `lock` guards every field but `bell` and the tile bytes. It is held for a few
// loads and stores, never across a wait or a copy, so a holder is never suspended on the fiber
// pool. Every change that can satisfy or doom a wait (a set, a push, a pop, a part's return, a
// failed waiter leaving) rings `bell`; a waiter re-checks under the lock, so it sees it (the
// doorbell eventcount: seen = prepare; check; wait(seen)).
//
// The deadlock rule, checked by a waiter under the lock each time it would suspend: its wait
// is hopeless when the part that alone could satisfy it (a pipe's bound popper or pusher) has
// returned, or when every part still running is waiting and none of their waits can proceed.
// Since only a running, non-waiting part changes the state, nothing can then change it again.
#ifndef PTO_CORE_MIX_SYNC_H
#define PTO_CORE_MIX_SYNC_H

#include <atomic>
#include <cstdint>
#include <cstring>

#include "core/handshake.h"
#include "pto/kernel.h"
#include "pto_platform/doorbell.h"
#include "pto_platform/kernel_call.h"

namespace pto {

// kMixExternal: a wait inside PTO-ISA's TPUSH/TPOP/TFREE (external_wait below).
enum MixWaitKind : uint8_t { kMixNone = 0, kMixFlag = 1, kMixPush = 2, kMixPop = 3, kMixExternal = 4 };

struct MixPipe {
  uint32_t head;                       // tiles pushed (committed) so far
  uint32_t tail;                       // tiles popped so far
  int32_t pusher;                      // bound part, -1 until the first push
  int32_t popper;                      // bound part, -1 until the first pop
  uint32_t bytes[PTO_MIX_PIPE_DEPTH];  // size of the tile in each entry (by count % depth)
};

struct alignas(kCacheLine) MixSync {
  Doorbell bell;                      // zeroed once a run (mix_sync_init), then its sequence only grows
  std::atomic<uint32_t> lock;         // 0 free, 1 held
  uint32_t live;                      // bit p: part p has not returned
  uint32_t waiting;                   // bit p: part p is suspended in a wait
  uint8_t wait_kind[PTO_MIX_PARTS];   // what each waiting part waits for (MixWaitKind)
  uint8_t wait_index[PTO_MIX_PARTS];  // its flag or pipe
  int64_t task;                       // the MIX task using the block (for a debugger)
  uint32_t ext_epoch;                 // PTO-ISA pipe changes so far (external_changed)
  uint32_t ext_seen[PTO_MIX_PARTS];   // the epoch each part last found its PTO-ISA pipe wait blocked at
  uint32_t flags[PTO_MIX_FLAGS];
  MixPipe pipes[PTO_MIX_PIPES];
  alignas(kCacheLine) unsigned char tiles[PTO_MIX_PIPES][PTO_MIX_PIPE_DEPTH][PTO_MIX_TILE_BYTES];
};

// Before the run's first MIX task on the cluster, by the scheduler thread that owns it: the
// runtimes neither zero nor copy in the blocks (mostly tile buffers), so the bell holds whatever
// the memory held, and a stale sleeper count could make a ring skip the wake-up of a part that
// has just parked. Nothing else refers to the block yet; the dispatch ring publishes the store.
inline void mix_sync_init(MixSync &m) {
  m.bell.seq.store(0, std::memory_order_relaxed);
  m.bell.sleepers.store(0, std::memory_order_relaxed);
}

// Ready for the next MIX task `task`: all parts running, nothing set, pipes empty and unbound.
inline void mix_sync_reset(MixSync &m, int64_t task) {
  m.lock.store(0, std::memory_order_relaxed);
  m.live = (1u << PTO_MIX_PARTS) - 1;
  m.waiting = 0;
  for (uint32_t p = 0; p < PTO_MIX_PARTS; ++p) m.wait_kind[p] = m.wait_index[p] = 0;
  m.task = task;
  m.ext_epoch = 0;
  for (uint32_t &e : m.ext_seen) e = 0;
  for (uint32_t &f : m.flags) f = 0;
  for (MixPipe &p : m.pipes) {
    p.head = p.tail = 0;
    p.pusher = p.popper = -1;
  }
}

namespace mix_impl {

inline void lock(MixSync &m) {
  while (m.lock.exchange(1, std::memory_order_acquire) != 0) {
    while (m.lock.load(std::memory_order_relaxed) != 0) platform_cpu_relax();
  }
}
inline void unlock(MixSync &m) {
  m.lock.store(0, std::memory_order_release);
}

inline MixSync &block_of(pto_kernel_call *call) {
  return *reinterpret_cast<MixSync *>(call->mix_sync);
}

inline int32_t fail(pto_kernel_call *call, uint32_t kind, uint32_t index) {
  const int32_t s = pto_mix_status(kind, call->mix_part, index);
  call->status = s;
  return s;
}

// Whether the wait (kind, index) can proceed now. Lock held.
inline bool can_proceed(const MixSync &m, uint8_t kind, uint32_t index) {
  switch (kind) {
    case kMixFlag:
      return m.flags[index] != 0;
    case kMixPush:
      return m.pipes[index].head - m.pipes[index].tail < PTO_MIX_PIPE_DEPTH;
    case kMixPop:
      return m.pipes[index].head != m.pipes[index].tail;
    default:
      return true;
  }
}

// Whether waiting part p may proceed. PTO-ISA's conditions are its own: such a waiter may
// proceed when a part changed a pipe since it last found its condition false. Lock held.
inline bool waiter_can_proceed(const MixSync &m, uint32_t p) {
  if (m.wait_kind[p] == kMixExternal) return m.ext_seen[p] != m.ext_epoch;
  return can_proceed(m, m.wait_kind[p], m.wait_index[p]);
}

// Whether part `part`'s wait, which cannot proceed now, never will (the rule at the top).
// Lock held; `part` is registered as waiting.
inline bool hopeless(const MixSync &m, uint32_t part, uint8_t kind, uint32_t index) {
  if (kind == kMixPush && m.pipes[index].popper >= 0 && m.pipes[index].popper != static_cast<int32_t>(part) &&
      !(m.live >> m.pipes[index].popper & 1))
    return true;
  if (kind == kMixPop && m.pipes[index].pusher >= 0 && m.pipes[index].pusher != static_cast<int32_t>(part) &&
      !(m.live >> m.pipes[index].pusher & 1))
    return true;
  if ((m.live & ~m.waiting) != 0) return false;  // a running part may still act
  for (uint32_t p = 0; p < PTO_MIX_PARTS; ++p) {
    if ((m.waiting >> p & 1) && waiter_can_proceed(m, p)) return false;
  }
  return true;
}

// Waits until (kind, index) can proceed, then runs take() under the lock. Returns 0, or a
// deadlock status (stored in the call's status word).
template <typename Take>
int32_t block_until(pto_kernel_call *call, uint8_t kind, uint32_t index, Take &&take) {
  MixSync &m = block_of(call);
  const uint32_t part = call->mix_part, bit = 1u << part;
  bool registered = false;
  for (;;) {
    const uint32_t seen = doorbell_prepare(m.bell);
    lock(m);
    if (can_proceed(m, kind, index)) {
      m.waiting &= ~bit;
      take(m);
      unlock(m);
      return 0;
    }
    if (!registered) {
      m.waiting |= bit;
      m.wait_kind[part] = kind;
      m.wait_index[part] = static_cast<uint8_t>(index);
      registered = true;
    }
    if (hopeless(m, part, kind, index)) {
      m.waiting &= ~bit;
      unlock(m);
      doorbell_ring(m.bell);  // the other waiters re-check: this part no longer waits
      return fail(call,
                  kind == kMixFlag   ? PTO_MIX_DEADLOCK_WAIT
                  : kind == kMixPush ? PTO_MIX_DEADLOCK_PUSH
                                     : PTO_MIX_DEADLOCK_POP,
                  index);
    }
    unlock(m);
    doorbell_wait(m.bell, seen);
  }
}

inline int32_t set(pto_kernel_call *call, uint32_t flag) {
  if (flag >= PTO_MIX_FLAGS) return fail(call, PTO_MIX_BAD_FLAG, flag);
  MixSync &m = block_of(call);
  lock(m);
  const bool full = m.flags[flag] >= PTO_MIX_FLAG_MAX;
  if (!full) ++m.flags[flag];
  unlock(m);
  if (full) return fail(call, PTO_MIX_FLAG_OVERFLOW, flag);
  // The unlock released this part's earlier writes to whoever takes the lock and sees the flag.
  doorbell_ring(m.bell);
  return 0;
}

inline int32_t wait(pto_kernel_call *call, uint32_t flag) {
  if (flag >= PTO_MIX_FLAGS) return fail(call, PTO_MIX_BAD_FLAG, flag);
  return block_until(call, kMixFlag, flag, [flag](MixSync &m) { --m.flags[flag]; });
}

// Binds `part` as the pipe's pusher (or popper) on first use; false if another part is.
inline bool bind(MixSync &m, int32_t *end, uint32_t part) {
  lock(m);
  if (*end < 0) *end = static_cast<int32_t>(part);
  const bool ok = *end == static_cast<int32_t>(part);
  unlock(m);
  return ok;
}

inline int32_t push(pto_kernel_call *call, uint32_t pipe, const void *tile, uint32_t bytes) {
  if (pipe >= PTO_MIX_PIPES) return fail(call, PTO_MIX_BAD_PIPE, pipe);
  if (bytes == 0 || bytes > PTO_MIX_TILE_BYTES) return fail(call, PTO_MIX_TILE_SIZE, pipe);
  MixSync &m = block_of(call);
  MixPipe &p = m.pipes[pipe];
  if (!bind(m, &p.pusher, call->mix_part)) return fail(call, PTO_MIX_PIPE_PUSHER, pipe);
  uint32_t entry = 0;
  if (const int32_t s =
          block_until(call, kMixPush, pipe, [&](MixSync &) { entry = p.head % PTO_MIX_PIPE_DEPTH; }))
    return s;
  // The only pusher owns entry `entry` until it commits: the popper reads it only once head
  // passes it, which the commit below does.
  memcpy(m.tiles[pipe][entry], tile, bytes);
  lock(m);
  p.bytes[entry] = bytes;
  ++p.head;
  unlock(m);
  doorbell_ring(m.bell);
  return 0;
}

inline int32_t pop(pto_kernel_call *call, uint32_t pipe, void *tile, uint32_t bytes) {
  if (pipe >= PTO_MIX_PIPES) return fail(call, PTO_MIX_BAD_PIPE, pipe);
  MixSync &m = block_of(call);
  MixPipe &p = m.pipes[pipe];
  if (!bind(m, &p.popper, call->mix_part)) return fail(call, PTO_MIX_PIPE_POPPER, pipe);
  uint32_t entry = 0, have = 0;
  if (const int32_t s = block_until(call, kMixPop, pipe, [&](MixSync &) {
        entry = p.tail % PTO_MIX_PIPE_DEPTH;
        have = p.bytes[entry];
      }))
    return s;
  if (have != bytes) return fail(call, PTO_MIX_TILE_MISMATCH, pipe);
  memcpy(tile, m.tiles[pipe][entry], bytes);  // the entry stays ours until tail passes it
  lock(m);
  ++p.tail;
  unlock(m);
  doorbell_ring(m.bell);
  return 0;
}

// PTO-ISA's pipes (TPUSH/TPOP/TFREE), whose waits the platform hands the runtime
// (pto_platform/kernel_call.h, KernelWaits; on the sim, src/platform/sim/tile_pipes_sim.h). The
// condition is PTO-ISA's, under its pipe's lock, and this block cannot read it; what it sees is
// whether any part changed a pipe since (ext_epoch: every change is followed by a notify,
// external_changed). A waiter registers while it still holds the pipe's lock, after finding its
// condition false, so a change it has not seen bumps the epoch after it registered: it is then
// one that may proceed, and the deadlock rule (hopeless) holds as for the block's own waits.
inline int32_t external_wait(void *self, KernelWaitRole role, uint32_t pipe, void (*release)(void *),
                             void (*reacquire)(void *), void *pipe_lock) {
  auto *call = static_cast<pto_kernel_call *>(self);
  MixSync &m = block_of(call);
  const uint32_t part = call->mix_part, bit = 1u << part;
  const uint32_t seen = doorbell_prepare(m.bell);
  lock(m);
  m.waiting |= bit;
  m.wait_kind[part] = kMixExternal;
  m.wait_index[part] = static_cast<uint8_t>(pipe);
  m.ext_seen[part] = m.ext_epoch;
  const bool doomed = hopeless(m, part, kMixExternal, pipe);
  if (doomed) m.waiting &= ~bit;
  unlock(m);
  if (doomed) {
    doorbell_ring(m.bell);  // the other waiters re-check: this part no longer waits
    return fail(call,
                role == kWaitPush  ? PTO_MIX_DEADLOCK_TPUSH
                : role == kWaitPop ? PTO_MIX_DEADLOCK_TPOP
                                   : PTO_MIX_DEADLOCK_TPIPE,
                pipe);
  }
  release(pipe_lock);
  doorbell_wait(m.bell, seen);
  reacquire(pipe_lock);
  lock(m);
  m.waiting &= ~bit;
  unlock(m);
  return 0;
}

inline void external_changed(void *self) {
  MixSync &m = block_of(static_cast<pto_kernel_call *>(self));
  lock(m);
  ++m.ext_epoch;
  unlock(m);
  doorbell_ring(m.bell);
}

}  // namespace mix_impl

// What a core hands platform_call_kernel for MIX part `call`: its PTO-ISA pipe waits.
inline KernelWaits mix_kernel_waits(pto_kernel_call *call) {
  return KernelWaits{call, mix_impl::external_wait, mix_impl::external_changed};
}

// The table a core hands the MIX parts it runs (pto_kernel_call.mix_ops).
inline const pto_mix_ops kMixOps = {PTO_MIX_OPS_ABI, 0, mix_impl::set, mix_impl::wait, mix_impl::push,
                                    mix_impl::pop};

// The core running part `call->mix_part` is done with it: its waits can no longer be satisfied
// by this part. Called after the kernel returns, before the core reports completion.
inline void mix_part_returned(pto_kernel_call *call) {
  MixSync &m = mix_impl::block_of(call);
  mix_impl::lock(m);
  m.live &= ~(1u << call->mix_part);
  m.waiting &= ~(1u << call->mix_part);
  mix_impl::unlock(m);
  doorbell_ring(m.bell);
}

}  // namespace pto
#endif  // PTO_CORE_MIX_SYNC_H
