// src/core/geometry.cpp — looking up the geometry table (core/geometry.h) by platform name.
#include "core/geometry.h"

#include <string.h>

#include "pto/c_api.h"

namespace pto {
namespace {
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
// The C API cannot read the table, so its per-core arrays carry the number; it must be this one.
static_assert(PTO_STATS_MAX_CORES == kMaxChipCores,
              "PTO_STATS_MAX_CORES (pto/c_api.h) must be the largest geometry row's core count");
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
