/* include/pto_abi/pto_async_kernel_api.h — deferred completion on a notification counter, the
 * reference's kernel API for it, as the sim runs it (tile kernels only: it uses PTO-ISA's comm
 * instructions).
 *
 * On the reference's device a kernel may return before its task is complete: it registers a
 * condition (a counter in a communication window reaching a value) and the scheduler completes
 * the task, releasing its dependents, once the condition holds; the core is free meanwhile.
 * Here the kernel itself waits for the condition before it returns (a TWAIT, which suspends
 * only the core's fiber: include/pto_sim_isa/pto/cpu/comm/TWait.hpp). The task's dependents are
 * released at the same point, after the condition holds; only the core stays busy until then.
 * A condition that never holds fails the run at its time limit, naming the counter.
 *
 *   AsyncCtx ctx = get_async_ctx(args);
 *   save_expected_notification_counter(ctx, counter, 1);   // returns once *counter >= 1
 *   send_notification(peer_counter, 1, pto::comm::NotifyOp::AtomicAdd);   // a TNOTIFY */
#ifndef PTO_ABI_PTO_ASYNC_KERNEL_API_H
#define PTO_ABI_PTO_ASYNC_KERNEL_API_H

#include <stdint.h>

#include <pto/comm/comm_types.hpp>
#include <pto/comm/pto_comm_inst.hpp>

/* What get_async_ctx gives a kernel. The sim completes every task when its kernel returns, so
 * there is nothing to carry: `deferred` only says the kernel asked for the API. */
struct AsyncCtx {
  int32_t deferred;
};

inline AsyncCtx get_async_ctx(int64_t *args) {
  (void)args;
  return AsyncCtx{1};
}

inline bool async_ctx_is_deferred(const AsyncCtx &ctx) {
  return ctx.deferred != 0;
}

/* TNOTIFY of `value` on the int32 counter at `remote_counter_addr` (any rank's window). */
inline void send_notification(volatile void *remote_counter_addr, int32_t value,
                              pto::comm::NotifyOp notify_op) {
  pto::comm::Signal signal(reinterpret_cast<int32_t *>(const_cast<void *>(remote_counter_addr)));
  pto::comm::TNOTIFY(signal, value, notify_op);
}

/* The task completes once the int32 counter at `counter_addr` is >= expected_value: here, the
 * kernel waits for it before returning. */
inline void save_expected_notification_counter(AsyncCtx &ctx, volatile void *counter_addr,
                                               uint32_t expected_value) {
  (void)ctx;
  pto::comm::Signal signal(reinterpret_cast<int32_t *>(const_cast<void *>(counter_addr)));
  pto::comm::TWAIT(signal, static_cast<int32_t>(expected_value), pto::comm::WaitCmp::GE);
}

#endif /* PTO_ABI_PTO_ASYNC_KERNEL_API_H */
