// src/core/geometry.h — chip geometries as data: one row per platform name, no per-chip code.
#ifndef PTO_CORE_GEOMETRY_H
#define PTO_CORE_GEOMETRY_H

#include <stdint.h>

#include "core/cluster_layout.h"

namespace pto {

struct ChipGeometry {
  const char *platform;  // user-facing name: "a2a3sim", "a5sim", "a2a3", "a5"
  // The backend it runs on, a name of the backend registry (include/pto/backend.h):
  // "cpu_sim" or "ascend_npu". The registry says what that backend is (program folder,
  // availability); this row only names it.
  const char *backend;
  const char *arch;      // chip generation: "a2a3" or "a5"
  int32_t num_clusters;  // a cluster is aic_per_cluster AIC + aiv_per_cluster AIV cores
  int32_t aic_per_cluster;
  int32_t aiv_per_cluster;
  // The most AICPU threads a run may ask for; also the default (aicpu_thread_num = 0) and what
  // the warm-up run uses, as the reference's default thread count equals its maximum on both chips.
  int32_t max_aicpu_threads;
  int32_t num_devices;  // valid device ids are 0 .. num_devices - 1

  constexpr int32_t cores_per_cluster() const { return aic_per_cluster + aiv_per_cluster; }
  constexpr int32_t total_cores() const { return num_clusters * cores_per_cluster(); }
  ClusterLayout layout() const {
    return ClusterLayout{static_cast<uint32_t>(num_clusters), static_cast<uint32_t>(aic_per_cluster),
                         static_cast<uint32_t>(aiv_per_cluster)};
  }
};

// The table. The counts are the reference implementation's platform configuration
// (hw-native-sys/simpler at 6ebaf7715, src/<arch>/platform/include/common/platform_config.h:
// PLATFORM_MAX_BLOCKDIM clusters, PLATFORM_MAX_AICPU_THREADS threads).
//   a2a3: 24 clusters of 1 AIC + 2 AIV, 4 AICPU threads (1 orchestrator + 3 schedulers).
//   a5:   one device of 2 dies x 18 clusters = 36 clusters (36 AIC + 72 AIV; its
//         src/a5/docs/hardware.md), 5 AICPU threads (1 orchestrator + 4 schedulers).
// The project's first architecture brief (../shared/ARCHITECTURE.md) gave a5 as 18 clusters and
// 7 AICPU threads: one die's clusters, and a thread count the reference's a5 runtime refuses
// (its AICPU init fails above 5).
// Fixed-size arrays (CorePool, the run stats) are sized by the largest row: kMaxChipClusters.
inline constexpr ChipGeometry kGeometries[] = {
    {"a2a3sim", "cpu_sim", "a2a3", 24, 1, 2, 4, 16},
    {"a5sim", "cpu_sim", "a5", 36, 1, 2, 5, 16},
    {"a2a3", "ascend_npu", "a2a3", 24, 1, 2, 4, 16},
    {"a5", "ascend_npu", "a5", 36, 1, 2, 5, 16},
};

namespace detail {
constexpr int32_t max_over_rows(int32_t (*field)(const ChipGeometry &)) {
  int32_t most = 0;
  for (const ChipGeometry &g : kGeometries) most = field(g) > most ? field(g) : most;
  return most;
}
}  // namespace detail

// The most clusters, and cores, of any row: what a fixed-size per-cluster or per-core array holds.
constexpr uint32_t kMaxChipClusters =
    static_cast<uint32_t>(detail::max_over_rows([](const ChipGeometry &g) { return g.num_clusters; }));
constexpr uint32_t kMaxChipCores =
    static_cast<uint32_t>(detail::max_over_rows([](const ChipGeometry &g) { return g.total_cores(); }));

// nullptr for an unknown name.
const ChipGeometry *find_geometry(const char *platform);
// All known rows, for listing in error messages.
const ChipGeometry *geometries(int *count);

}  // namespace pto
#endif  // PTO_CORE_GEOMETRY_H
