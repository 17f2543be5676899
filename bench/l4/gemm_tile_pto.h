// bench/l4/gemm_tile_pto.h — the tile kernel and initial values of the L4 GEMM benchmark (l4_gemm.cpp).
//
// A stand-in with the signatures of the shared tile header the benchmarks will use: c += a * b on
// ts x ts row-major float tiles (naive i-k-j loop), and the value of every element of a tile of A
// or B as a function of its global position, so that every rank and the reference agree.
#ifndef PTO_BENCH_L4_GEMM_TILE_PTO_H
#define PTO_BENCH_L4_GEMM_TILE_PTO_H

// c += a * b; a, b, c: ts x ts, row-major.
static inline void pto_bench_tile_gemm(const float *a, const float *b, float *c, int ts) {
  for (int i = 0; i < ts; ++i)
    for (int k = 0; k < ts; ++k) {
      const float aik = a[i * ts + k];
      for (int j = 0; j < ts; ++j) c[i * ts + j] += aik * b[k * ts + j];
    }
}

// Fills tile (ti, tj) of A (which = 0) or B (which = 1): element (i, j) is
// (((ti*ts + i)*7 + (tj*ts + j)*3) % 11) / 11 - 0.5 (the same for A and B).
static inline void pto_bench_gemm_init(float *tile, int which /*0=A,1=B*/, int ti, int tj, int ts) {
  (void)which;
  for (int i = 0; i < ts; ++i)
    for (int j = 0; j < ts; ++j)
      tile[i * ts + j] = (float)(((ti * ts + i) * 7 + (tj * ts + j) * 3) % 11) / 11.0f - 0.5f;
}

#endif  // PTO_BENCH_L4_GEMM_TILE_PTO_H
