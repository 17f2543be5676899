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
  int32_t max_aicpu_threads;
  int32_t num_devices;  // valid device ids are 0 .. num_devices - 1

  int32_t cores_per_cluster() const { return aic_per_cluster + aiv_per_cluster; }
  int32_t total_cores() const { return num_clusters * cores_per_cluster(); }
  ClusterLayout layout() const {
    return ClusterLayout{static_cast<uint32_t>(num_clusters), static_cast<uint32_t>(aic_per_cluster),
                         static_cast<uint32_t>(aiv_per_cluster)};
  }
};

// nullptr for an unknown name.
const ChipGeometry *find_geometry(const char *platform);
// All known rows, for listing in error messages.
const ChipGeometry *geometries(int *count);

}  // namespace pto
#endif  // PTO_CORE_GEOMETRY_H
