// src/core/geometry.cpp — the geometry table (seed 001: a2a3 = 24 clusters, 4 AICPU threads;
// a5 = 18 clusters, 7 AICPU threads; each cluster 1 AIC + 2 AIV).
#include "core/geometry.h"

#include <string.h>

namespace pto {
namespace {
constexpr ChipGeometry kGeometries[] = {
    {"a2a3sim", "cpu_sim", "a2a3", 24, 1, 2, 4, 16},
    {"a5sim", "cpu_sim", "a5", 18, 1, 2, 7, 16},
    {"a2a3", "ascend_npu", "a2a3", 24, 1, 2, 4, 16},
    {"a5", "ascend_npu", "a5", 18, 1, 2, 7, 16},
};

// CorePool keeps a cluster's cores in an array of kMaxCoresPerCluster.
constexpr bool rows_fit() {
  for (const ChipGeometry &g : kGeometries) {
    if (g.aic_per_cluster < 1 || g.aiv_per_cluster < 0 ||
        static_cast<uint32_t>(g.aic_per_cluster + g.aiv_per_cluster) > kMaxCoresPerCluster)
      return false;
  }
  return true;
}
static_assert(rows_fit(), "a geometry row has more cores a cluster than kMaxCoresPerCluster");
}  // namespace

const ChipGeometry *find_geometry(const char *platform) {
  if (platform == nullptr) return nullptr;
  for (const ChipGeometry &g : kGeometries) {
    if (strcmp(g.platform, platform) == 0) return &g;
  }
  return nullptr;
}

const ChipGeometry *geometries(int *count) {
  *count = static_cast<int>(sizeof kGeometries / sizeof kGeometries[0]);
  return kGeometries;
}

}  // namespace pto
