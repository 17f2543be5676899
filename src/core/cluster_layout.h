// src/core/cluster_layout.h — how a chip's cores form clusters and where each sits in the handshake block.
//
// The numbers are data: a row of the geometry table (core/geometry.h) gives them on the host,
// and each run's header carries them to the device (CorePool::init). The handshake block has one
// slot per core, AIC cores first (slot A*c + l is cluster c's AIC l, for A AIC per cluster),
// then AIV (slot A*C + V*c + l, for C clusters of V AIV each).
#ifndef PTO_CORE_CLUSTER_LAYOUT_H
#define PTO_CORE_CLUSTER_LAYOUT_H

#include <cstdint>

#include "pto/types.h"

namespace pto {

// The most cores a cluster may have (every row of the geometry table is checked against it): a
// MIX task runs one part on each, and a scheduler keeps their indices in a fixed array.
constexpr uint32_t kMaxCoresPerCluster = 3;

// Where one handshake slot sits.
struct HandshakeSlotPlace {
  uint32_t core_type;  // PTO_CORE_AIC or PTO_CORE_AIV
  uint32_t cluster;
  uint32_t lane;   // index among the cluster's cores of that type
  uint32_t lanes;  // cores of that type per cluster
};

struct ClusterLayout {
  uint32_t clusters = 0;
  uint32_t aic_per_cluster = 0;
  uint32_t aiv_per_cluster = 0;

  uint32_t cores_per_cluster() const { return aic_per_cluster + aiv_per_cluster; }
  uint32_t cores() const { return clusters * cores_per_cluster(); }

  HandshakeSlotPlace place(uint32_t slot) const {
    const uint32_t aic = clusters * aic_per_cluster;
    if (slot < aic) return {PTO_CORE_AIC, slot / aic_per_cluster, slot % aic_per_cluster, aic_per_cluster};
    return {PTO_CORE_AIV, (slot - aic) / aiv_per_cluster, (slot - aic) % aiv_per_cluster, aiv_per_cluster};
  }
  // Member k of cluster c (its AIC cores first, then its AIV cores): its handshake slot, and
  // its index among the chip's cores of its type.
  uint32_t slot(uint32_t c, uint32_t k) const {
    return k < aic_per_cluster ? c * aic_per_cluster + k
                               : clusters * aic_per_cluster + c * aiv_per_cluster + (k - aic_per_cluster);
  }
  uint32_t type_index(uint32_t c, uint32_t k) const {
    return k < aic_per_cluster ? c * aic_per_cluster + k : c * aiv_per_cluster + (k - aic_per_cluster);
  }
};

}  // namespace pto
#endif  // PTO_CORE_CLUSTER_LAYOUT_H
