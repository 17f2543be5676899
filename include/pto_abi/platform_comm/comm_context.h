/* include/pto_abi/platform_comm/comm_context.h — what a kernel knows of its communication domain.
 *
 * A communication domain (docs/design/comm_domains.md) gives each of its chips a window of the
 * same size; every chip's kernels reach every rank's window through the CommContext the
 * orchestration hands them as a scalar (ChipDomainContext.device_ctx). The layout is the
 * reference implementation's, so its kernels read it unchanged:
 *   workSpace, workSpaceSize  an asynchronous-DMA workspace (0: none; the sim has no DMA engine)
 *   rankId, rankNum           this chip's rank in the domain and the number of ranks
 *   winSize                   bytes of each rank's window
 *   windowsIn[r]              rank r's window as this chip addresses it (ranks >= rankNum: 0)
 *   windowsOut[r]             the same addresses (the sim has no separate outbound windows)
 * A peer's copy of a local address is windowsIn[peer] + (address - windowsIn[rankId]). */
#ifndef PTO_ABI_PLATFORM_COMM_COMM_CONTEXT_H
#define PTO_ABI_PLATFORM_COMM_COMM_CONTEXT_H

#include <stddef.h>
#include <stdint.h>

#define PTO_COMM_MAX_RANKS 64

#ifdef __cplusplus
static constexpr uint32_t COMM_MAX_RANK_NUM = PTO_COMM_MAX_RANKS;
#endif

struct CommContext {
  uint64_t workSpace;
  uint64_t workSpaceSize;
  uint32_t rankId;
  uint32_t rankNum;
  uint64_t winSize;
  uint64_t windowsIn[PTO_COMM_MAX_RANKS];
  uint64_t windowsOut[PTO_COMM_MAX_RANKS];
};

#ifdef __cplusplus
static_assert(sizeof(CommContext) == 1056, "CommContext: the reference's kernels expect 1056 bytes");
static_assert(offsetof(CommContext, rankId) == 16 && offsetof(CommContext, winSize) == 24 &&
                  offsetof(CommContext, windowsIn) == 32 && offsetof(CommContext, windowsOut) == 544,
              "CommContext: field offsets differ from the reference's");
#endif

#endif /* PTO_ABI_PLATFORM_COMM_COMM_CONTEXT_H */
