"""examples/paged_attention/test_paged_attention.py — paged decode attention as a scene test.

One decode step: each request's query heads attend over its context, stored in a paged KV cache
(blocks of block_size tokens, listed per request in a block table; context lengths differ per
request). Per query tile and KV block the orchestration submits QK (AIC: S = Q K^T),
softmax-prepare (AIV: scale, row max, exp, row sum), PV (AIC: P V) and the online update (AIV:
running max, sum and output, divided on the last block). One class per runtime, sharing the
kernels, the cases and the data. Inputs are bfloat16 (ml_dtypes) or float16, the output
float32, checked against a NumPy golden computed in float32 from the same rounded inputs
(rtol = atol = 1e-3). One KV head, so the caches are (blocks, block_size, head_dim). The tile
kernels need a PTO-ISA checkout (PTO_ISA_ROOT) and clang++-19. Run it with
``python examples/paged_attention/test_paged_attention.py [-p PLATFORM] [--case NAME]
[--manual include]``; main.py runs one case from its flags.
"""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np
from pto_runtime import Direction as D
from pto_runtime.scene import Scalar, SceneTestCase, TaskArgsBuilder, TensorArg, scene_test

INCORES = [  # the func_ids the orchestrations submit
    {"func_id": 0, "source": "kernels/kernel_qk.cpp", "core_type": "aic"},
    {"func_id": 1, "source": "kernels/kernel_softmax_prepare.cpp", "core_type": "aiv"},
    {"func_id": 2, "source": "kernels/kernel_pv.cpp", "core_type": "aic"},
    {"func_id": 3, "source": "kernels/kernel_online_update.cpp", "core_type": "aiv"},
]
# query, key_cache, value_cache, block_table, context_lens, out; then the scalar scale.
SIGNATURE = [D.INPUT] * 5 + [D.OUTPUT]
DTYPES = {"bfloat16": np.dtype(ml_dtypes.bfloat16), "float16": np.dtype(np.float16)}
# The shapes: query heads (one query tile of min(heads, 128) rows per task), head_dim,
# block_size, one context length per request, max_model_len (block table width = max_model_len
# // block_size). Each (q_tile, head_dim, block_size) is one the kernels are compiled for
# (kernels/pa_tiles.h).
SHAPES: dict[str, dict[str, Any]] = {
    "small": {
        "heads": 16, "head_dim": 16, "block_size": 16,
        "context_lens": [33, 17], "max_model_len": 256,
    },
    "varseq4": {
        "heads": 16, "head_dim": 16, "block_size": 16,
        "context_lens": [33, 64, 128, 15], "max_model_len": 256,
    },
    "mid": {
        "heads": 16, "head_dim": 128, "block_size": 128,
        "context_lens": [1024, 700, 257, 129], "max_model_len": 2048,
    },
    "wide": {
        "heads": 64, "head_dim": 128, "block_size": 64,
        "context_lens": [300, 129], "max_model_len": 512,
    },
}  # fmt: skip
SIM = ["a2a3sim", "a5sim"]


def case_params(
    shape: str, dtype: str = "bfloat16", scale: float = 1.0, seed: int = 0
) -> dict[str, Any]:
    """A case's params: the named shapes, the input type, the score scale, the seed."""
    return {**SHAPES[shape], "dtype": dtype, "scale": scale, "seed": seed}


class PagedAttentionScene(SceneTestCase):
    """The cases and data of both runtimes' classes (not a scene test itself)."""

    CASES = [
        {"name": "small", "platforms": SIM, "params": case_params("small")},
        {"name": "small_float16", "platforms": SIM, "params": case_params("small", "float16")},
        {"name": "varseq4", "platforms": SIM, "params": case_params("varseq4")},
        {"name": "varseq4_float16", "platforms": SIM, "params": case_params("varseq4", "float16")},
        {  # one cluster, one AICPU thread: the orchestrator also schedules (tensormap runtime)
            "name": "one_cluster",
            "platforms": SIM,
            "params": case_params("small"),
            "config": {"block_dim": 1, "aicpu_thread_num": 1},
        },
        {"name": "mid", "platforms": SIM, "params": case_params("mid")},
        {"name": "wide", "platforms": SIM, "params": case_params("wide")},
    ]
    RTOL = ATOL = 1e-3

    def generate_args(self, params: Any) -> TaskArgsBuilder:
        rng = np.random.default_rng(params["seed"])
        dtype = DTYPES[params["dtype"]]
        batch, heads, head_dim = len(params["context_lens"]), params["heads"], params["head_dim"]
        block_size = params["block_size"]
        context_lens = np.array(params["context_lens"], dtype=np.int32)
        blocks_per_request = -(-int(context_lens.max()) // block_size)
        cache_blocks = batch * blocks_per_request
        kv_shape = (cache_blocks, block_size, head_dim)
        table_shape = (batch, params["max_model_len"] // block_size)
        return TaskArgsBuilder(
            TensorArg("query", rng.uniform(-0.5, 0.5, (batch, heads, head_dim)).astype(dtype)),
            TensorArg("key_cache", rng.uniform(-0.5, 0.5, kv_shape).astype(dtype)),
            TensorArg("value_cache", rng.uniform(-1.0, 1.0, kv_shape).astype(dtype)),
            TensorArg("block_table", rng.integers(0, cache_blocks, table_shape, dtype=np.int32)),
            TensorArg("context_lens", context_lens),
            TensorArg("out", np.zeros((batch, heads, head_dim), dtype=np.float32)),
            Scalar("scale", float(params["scale"])),
        )

    def compute_golden(self, args: TaskArgsBuilder, params: Any) -> None:
        """The online-softmax recurrence the kernels run, in float32 from the rounded inputs.

        As on the device, the softmax numerators are rounded to the input type before they are
        summed and multiplied with V."""
        query, key_cache, value_cache = args.query, args.key_cache, args.value_cache
        block_size = key_cache.shape[1]
        for b, context in enumerate(int(n) for n in args.context_lens):
            q = query[b].astype(np.float32)
            m = l_sum = o = np.zeros(0, dtype=np.float32)
            for j in range(-(-context // block_size)):
                valid = min(block_size, context - j * block_size)
                block = int(args.block_table[b, j])
                k = key_cache[block, :valid].astype(np.float32)
                v = value_cache[block, :valid].astype(np.float32)
                s = (q @ k.T) * np.float32(args.scale)
                m_blk = s.max(axis=1, keepdims=True)
                p = np.exp(s - m_blk).astype(query.dtype).astype(np.float32)
                l_blk = p.sum(axis=1, keepdims=True)
                o_blk = p @ v
                if j == 0:
                    m, l_sum, o = m_blk, l_blk, o_blk
                else:
                    m_new = np.maximum(m, m_blk)
                    alpha, beta = np.exp(m - m_new), np.exp(m_blk - m_new)
                    l_sum = alpha * l_sum + beta * l_blk
                    o = alpha * o + beta * o_blk
                    m = m_new
            args.out[b] = o / l_sum


@scene_test(level=2, runtime="tensormap_and_ringbuffer")
class TestPagedAttentionTmr(PagedAttentionScene):
    CALLABLE = {
        "orchestration": {"source": "orchestration_tmr.cpp", "signature": SIGNATURE},
        "incores": INCORES,
    }


@scene_test(level=2, runtime="host_build_graph")
class TestPagedAttentionHbg(PagedAttentionScene):
    CALLABLE = {
        "orchestration": {"source": "orchestration_hbg.cpp", "signature": SIGNATURE},
        "incores": INCORES,
    }


if __name__ == "__main__":
    SceneTestCase.run_module(__name__)
