/* bench/l4/gemm_tile.h — the tile body and the inputs of the distributed tiled GEMM (workload `gemm`).
 *
 * Shared by both runtimes' GEMM programs (starpu_l4.cpp, and ours) so they multiply the same
 * numbers with the same loop: plain C, valid as C and C++, no dependencies, header only.
 *
 * A tile is ts x ts floats, row-major, contiguous (element (i, j) at [i * ts + j]). The matrices
 * are n x n with n = T * ts, cut into T x T tiles; tile (ti, tj) holds rows ti*ts .. ti*ts+ts-1
 * and columns tj*ts .. tj*ts+ts-1.
 */
#ifndef PTO_BENCH_L4_GEMM_TILE_H
#define PTO_BENCH_L4_GEMM_TILE_H

/* An int-to-float conversion that neither C's -Wconversion nor C++'s -Wold-style-cast flags. */
#ifdef __cplusplus
#define PTO_BENCH_TO_FLOAT(x) static_cast<float>(x)
#else
#define PTO_BENCH_TO_FLOAT(x) ((float)(x))
#endif

/* c += a * b on ts x ts row-major tiles: the naive i-k-j loop. For one element of C the sum
 * runs over k in increasing order, so T calls over k-tiles 0..T-1 add the terms in the same
 * order as a sequential i-k-j triple loop over the whole matrices (the reference check). */
static inline void pto_bench_tile_gemm(const float *a, const float *b, float *c, int ts) {
  const long n = ts;
  long i, k, j;
  for (i = 0; i < n; ++i) {
    float *crow = c + i * n;
    for (k = 0; k < n; ++k) {
      const float aik = a[i * n + k];
      const float *brow = b + k * n;
      for (j = 0; j < n; ++j) crow[j] += aik * brow[j];
    }
  }
}

/* The value of element (gi, gj) of the whole matrix A (which = 0) or B (which = 1): values in
 * [-0.5, 0.5), different for A and B, never 0. */
static inline float pto_bench_gemm_value(int which, long gi, long gj) {
  if (which == 0) return PTO_BENCH_TO_FLOAT((gi * 7 + gj * 3) % 11) / 11.0f - 0.5f;
  return PTO_BENCH_TO_FLOAT((gi * 5 + gj * 2 + 1) % 13) / 13.0f - 0.5f;
}

/* Fills tile (ti, tj) of A (which = 0) or B (which = 1), ts x ts row-major, with its values. */
static inline void pto_bench_gemm_init(float *tile, int which, int ti, int tj, int ts) {
  const long n = ts, row0 = ti * n, col0 = tj * n;
  long i, j;
  for (i = 0; i < n; ++i)
    for (j = 0; j < n; ++j) tile[i * n + j] = pto_bench_gemm_value(which, row0 + i, col0 + j);
}

#endif /* PTO_BENCH_L4_GEMM_TILE_H */
