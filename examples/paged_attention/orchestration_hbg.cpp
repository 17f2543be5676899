// examples/paged_attention/orchestration_hbg.cpp — paged decode attention for the host_build_graph runtime.
//
// Same run arguments and tasks as orchestration_tmr.cpp, built on the host with explicit edges.
// The host reads the context lengths and the block table from the caller's arrays
// (args.host_data), so the graph has exactly the blocks each request needs. Per query tile and
// block: QK -> softmax-prepare -> PV -> online update, and each update after the previous update
// of its query tile (the running state). Sub-tensors are contiguous blocks (pto::Tensor with an
// address inside the run tensor): a query tile's rows, one cache block, a window of `out`.
// Temps are allocated per block and freed after the run (small: a few KiB per block).
#include "pto/host_graph.h"

namespace {
constexpr uint32_t kQk = 0, kSoftmaxPrepare = 1, kPv = 2, kOnlineUpdate = 3;
constexpr int64_t kMaxQueryTile = 128;

// `rows` x `cols` elements starting `first` elements into `whole`, as a 2-D tensor.
pto::Tensor matrix(const pto::Tensor &whole, uint64_t first, int64_t rows, int64_t cols) {
  pto::Tensor t = whole;
  const uint64_t esize = whole.nbytes / whole.nelems;
  t.addr = whole.addr + first * esize;
  t.nelems = static_cast<uint64_t>(rows * cols);
  t.nbytes = t.nelems * esize;
  t.ndim = 2;
  for (uint32_t d = 0; d < pto::kMaxTensorDims; ++d) t.shape[d] = 0;
  t.shape[0] = rows;
  t.shape[1] = cols;
  return t;
}

pto::Tensor temp(pto::GraphBuilder &graph, pto_dtype dtype, int64_t rows, int64_t cols) {
  const pto::Tensor flat = graph.alloc_tensor(dtype, static_cast<uint64_t>(rows * cols));
  return cols == 1 ? flat : matrix(flat, 0, rows, cols);
}
}  // namespace

PTO_ORCHESTRATION(graph, args) {
  if (args.num_tensors() != 6 || args.num_scalars() != 1) {
    graph.fail(
        "paged_attention expects tensors (query, key_cache, value_cache, block_table, context_lens, out) "
        "and scalar (scale)");
    return;
  }
  const pto::Tensor &query = args.tensor(0), &key_cache = args.tensor(1), &value_cache = args.tensor(2);
  const pto::Tensor &block_table = args.tensor(3), &context_lens = args.tensor(4), &out = args.tensor(5);
  const int64_t scale_bits = args.scalar(0);
  if (query.ndim != 3 || key_cache.ndim != 3 || value_cache.ndim != 3 || block_table.ndim != 2 ||
      context_lens.ndim != 1 || out.ndim != 3) {
    graph.fail(
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
    graph.fail("paged_attention: inconsistent shapes");
    return;
  }
  if (block_table.dtype != PTO_DTYPE_I32 || context_lens.dtype != PTO_DTYPE_I32 ||
      out.dtype != PTO_DTYPE_F32 || key_cache.dtype != query.dtype || value_cache.dtype != query.dtype) {
    graph.fail("paged_attention: block_table and context_lens must be int32, out float32, q/k/v of one type");
    return;
  }
  const auto *table = static_cast<const int32_t *>(args.host_data(3));
  const auto *contexts = static_cast<const int32_t *>(args.host_data(4));
  const pto_dtype in_type = query.dtype;
  const uint64_t block_elems = static_cast<uint64_t>(block_size * head_dim);

  using pto::TaskArg;
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t context = contexts[b];
    const int64_t blocks = (context + block_size - 1) / block_size;
    if (context < 1 || blocks > max_blocks) {
      graph.fail("paged_attention: a context length is < 1 or needs more blocks than the block table holds");
      return;
    }
    for (int64_t q0 = 0; q0 < heads; q0 += q_tile) {
      const uint64_t row0 = static_cast<uint64_t>((b * heads + q0) * head_dim);
      const pto::Tensor q_rows = matrix(query, row0, q_tile, head_dim);
      const pto::Tensor out_rows = matrix(out, row0, q_tile, head_dim);
      const pto::Tensor m = temp(graph, PTO_DTYPE_F32, q_tile, 1);
      const pto::Tensor l = temp(graph, PTO_DTYPE_F32, q_tile, 1);
      const pto::Tensor o = temp(graph, PTO_DTYPE_F32, q_tile, head_dim);
      pto::TaskId prev_update = pto::kInvalidTask;
      for (int64_t j = 0; j < blocks; ++j) {
        const int64_t cache_block = table[b * max_blocks + j];
        if (cache_block < 0 || cache_block >= cache_blocks) {
          graph.fail("paged_attention: a block table entry is outside the cache");
          return;
        }
        const uint64_t kv_first = static_cast<uint64_t>(cache_block) * block_elems;
        const int64_t valid = context - j * block_size < block_size ? context - j * block_size : block_size;
        const pto::Tensor s = temp(graph, PTO_DTYPE_F32, q_tile, block_size);
        const pto::Tensor p = temp(graph, in_type, q_tile, block_size);
        const pto::Tensor m_blk = temp(graph, PTO_DTYPE_F32, q_tile, 1);
        const pto::Tensor l_blk = temp(graph, PTO_DTYPE_F32, q_tile, 1);
        const pto::Tensor o_blk = temp(graph, PTO_DTYPE_F32, q_tile, head_dim);

        const pto::TaskId qk =
            graph.add_task(kQk, PTO_CORE_AIC,
                           {TaskArg::of(q_rows),
                            TaskArg::of(matrix(key_cache, kv_first, block_size, head_dim)), TaskArg::of(s)});
        const pto::TaskId sf =
            graph.add_task(kSoftmaxPrepare, PTO_CORE_AIV,
                           {TaskArg::of(s), TaskArg::of(p), TaskArg::of(m_blk), TaskArg::of(l_blk),
                            TaskArg::of_i64(scale_bits), TaskArg::of_i64(valid)});
        const pto::TaskId pv =
            graph.add_task(kPv, PTO_CORE_AIC,
                           {TaskArg::of(p), TaskArg::of(matrix(value_cache, kv_first, block_size, head_dim)),
                            TaskArg::of(o_blk)});
        const pto::TaskId update =
            graph.add_task(kOnlineUpdate, PTO_CORE_AIV,
                           {TaskArg::of(m_blk), TaskArg::of(l_blk), TaskArg::of(o_blk), TaskArg::of(m),
                            TaskArg::of(l), TaskArg::of(o), TaskArg::of(out_rows),
                            TaskArg::of_i64(j == 0 ? 1 : 0), TaskArg::of_i64(j == blocks - 1 ? 1 : 0)});
        graph.add_dependency(qk, sf);
        graph.add_dependency(sf, pv);
        graph.add_dependency(pv, update);
        if (prev_update != pto::kInvalidTask) graph.add_dependency(prev_update, update);
        prev_update = update;
      }
    }
  }
}
