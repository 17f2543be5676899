// examples/paged_attention/orchestration_tmr.cpp — paged decode attention, tensormap_and_ringbuffer runtime.
//
// Run arguments: query (batch, heads, D), key_cache and value_cache (cache blocks, N, D), all
// bfloat16 or float16; block_table (batch, max blocks per request) and context_lens (batch), int32;
// out (batch, heads, D) float32; scalar: scale (float32 bits). Runs on the device and reads the
// context lengths and the block table there (they are run inputs, in device memory).
//
// Per batch element b and tile of M = min(heads, 128) query heads, one scope holds the running
// state (m, l: M floats; o: M x D), and per KV block j an inner scope holds the block's temps and
// four tasks: QK (AIC) -> softmax-prepare (AIV) -> PV (AIC) -> online update (AIV). No edges are
// written: each task reads what the previous one wrote, and the updates of one query tile chain
// through m, l and o (INOUT). The result window of `out` is written only by the last block's
// update, so the earlier updates pass it untracked (NO_DEP) and the last one as OUTPUT_EXISTING.
#include "pto/orchestration.h"

namespace {
constexpr uint32_t kQk = 0, kSoftmaxPrepare = 1, kPv = 2, kOnlineUpdate = 3;
constexpr int64_t kMaxQueryTile = 128;

// Element `i` of an int32 run tensor, read in device memory (the orchestration runs there).
int32_t read_i32(const pto::TensorView &v, int64_t i) {
  return reinterpret_cast<const int32_t *>(static_cast<uintptr_t>(v.addr()))[i];
}
}  // namespace

PTO_DEVICE_ORCHESTRATION(orch) {
  if (orch.num_tensors() != 6 || orch.num_scalars() != 1) {
    orch.fail(
        "paged_attention expects tensors (query, key_cache, value_cache, block_table, context_lens, out) "
        "and scalar (scale)");
    return;
  }
  using pto::Arg;
  const pto::TensorView query = orch.tensor(0), key_cache = orch.tensor(1), value_cache = orch.tensor(2);
  const pto::TensorView block_table = orch.tensor(3), context_lens = orch.tensor(4), out = orch.tensor(5);
  const int64_t scale_bits = orch.scalar(0);
  if (query.ndim != 3 || key_cache.ndim != 3 || value_cache.ndim != 3 || block_table.ndim != 2 ||
      context_lens.ndim != 1 || out.ndim != 3) {
    orch.fail(
        "paged_attention: query and out are (batch, heads, D), the caches (blocks, block_size, D), "
        "block_table (batch, max_blocks), context_lens (batch)");
    return;
  }
  const int64_t batch = query.shape[0], heads = query.shape[1], head_dim = query.shape[2];
  const int64_t cache_blocks = key_cache.shape[0], block_size = key_cache.shape[1];
  const int64_t max_blocks = block_table.shape[1];
  const int64_t q_tile = heads < kMaxQueryTile ? heads : kMaxQueryTile;
  if (key_cache.shape[2] != head_dim || value_cache.shape[0] != cache_blocks ||
      value_cache.shape[1] != block_size || value_cache.shape[2] != head_dim ||
      block_table.shape[0] != batch || context_lens.shape[0] != batch || out.shape[0] != batch ||
      out.shape[1] != heads || out.shape[2] != head_dim || heads % q_tile != 0) {
    orch.fail("paged_attention: inconsistent shapes");
    return;
  }
  if (block_table.dtype != PTO_DTYPE_I32 || context_lens.dtype != PTO_DTYPE_I32 ||
      out.dtype != PTO_DTYPE_F32 || key_cache.dtype != query.dtype || value_cache.dtype != query.dtype) {
    orch.fail("paged_attention: block_table and context_lens must be int32, out float32, q/k/v of one type");
    return;
  }
  const pto_dtype in_type = query.dtype;

  for (int64_t b = 0; b < batch; ++b) {
    const int64_t context = read_i32(context_lens, b * context_lens.strides[0]);
    const int64_t blocks = (context + block_size - 1) / block_size;
    if (context < 1 || blocks > max_blocks) {
      orch.fail("paged_attention: a context length is < 1 or needs more blocks than the block table holds");
      return;
    }
    for (int64_t q0 = 0; q0 < heads; q0 += q_tile) {
      pto::Scope query_scope(orch);
      const int64_t rows_start[3] = {b, q0, 0}, rows_extent[3] = {1, q_tile, head_dim};
      const pto::TensorView q_rows = query.slice(rows_start, rows_extent);
      const pto::TensorView out_rows = out.slice(rows_start, rows_extent);
      const pto::TensorView m = orch.alloc_tensor(PTO_DTYPE_F32, q_tile);
      const pto::TensorView l = orch.alloc_tensor(PTO_DTYPE_F32, q_tile);
      const pto::TensorView o = orch.alloc_tensor(PTO_DTYPE_F32, q_tile, head_dim);

      for (int64_t j = 0; j < blocks; ++j) {
        pto::Scope block_scope(orch);
        const int64_t cache_block =
            read_i32(block_table, b * block_table.strides[0] + j * block_table.strides[1]);
        if (cache_block < 0 || cache_block >= cache_blocks) {
          orch.fail("paged_attention: a block table entry is outside the cache");
          return;
        }
        const int64_t kv_start[3] = {cache_block, 0, 0}, kv_extent[3] = {1, block_size, head_dim};
        const int64_t valid = context - j * block_size < block_size ? context - j * block_size : block_size;
        const bool first = j == 0, last = j == blocks - 1;

        const pto::TensorView s = orch.alloc_tensor(PTO_DTYPE_F32, q_tile, block_size);
        const pto::TensorView p = orch.alloc_tensor(in_type, q_tile, block_size);
        const pto::TensorView m_blk = orch.alloc_tensor(PTO_DTYPE_F32, q_tile);
        const pto::TensorView l_blk = orch.alloc_tensor(PTO_DTYPE_F32, q_tile);
        const pto::TensorView o_blk = orch.alloc_tensor(PTO_DTYPE_F32, q_tile, head_dim);
        orch.submit_task(kQk, PTO_CORE_AIC,
                         {Arg::in(q_rows), Arg::in(key_cache.slice(kv_start, kv_extent)), Arg::out(s)});
        orch.submit_task(kSoftmaxPrepare, PTO_CORE_AIV,
                         {Arg::in(s), Arg::out(p), Arg::out(m_blk), Arg::out(l_blk), Arg::i64(scale_bits),
                          Arg::i64(valid)});
        orch.submit_task(kPv, PTO_CORE_AIC,
                         {Arg::in(p), Arg::in(value_cache.slice(kv_start, kv_extent)), Arg::out(o_blk)});
        orch.submit_task(kOnlineUpdate, PTO_CORE_AIV,
                         {Arg::in(m_blk), Arg::in(l_blk), Arg::in(o_blk), Arg::inout(m), Arg::inout(l),
                          Arg::inout(o), last ? Arg::out_existing(out_rows) : Arg::no_dep(out_rows),
                          Arg::i64(first ? 1 : 0), Arg::i64(last ? 1 : 0)});
      }
    }
  }
}
