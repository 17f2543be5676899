// include/pto_sim_isa/pto/cpu/comm/TGet.hpp — TGET and TPUT's copy on the sim: a row at a time,
// and windows of chips on other hosts reached through the L4 worker.
//
// PTO-ISA's CPU TGET and TPUT (the pinned pto/cpu/comm/TGet.hpp and TPut.hpp) copy element by
// element through PTO-ISA's Copy_Data, defined in TGet.hpp; TPut.hpp includes
// <pto/cpu/comm/TGet.hpp>, which finds this file first (the kernel compiler puts
// include/pto_sim_isa before PTO-ISA's include directory). The contract is PTO-ISA's: copy the
// 5-D region of `src` into that of `dst` (dst's shape), or add it element-wise
// (AtomicType::AtomicAdd). Here:
//   - a row whose innermost stride is 1 on both sides is copied with memcpy;
//   - a side at an address of a window of a chip on another host (PTO_SIM_IS_REMOTE,
//     include/pto/sim_tile_pipes.h) is reached through pto_sim_remote (the force-included
//     pto_tile_sim_hooks.h): a put, get or atomic add per row, then one flush, so the data is
//     at its destination when the instruction returns (docs/design/comm_domains.md, "Across
//     hosts"). Both sides remote: each row passes through a local buffer.
#ifndef TGET_HPP
#define TGET_HPP

#include <pto/common/pto_tile.hpp>

#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "pto/cpu/parallel.hpp"
#include "pto/cpu/tile_offsets.hpp"

namespace pto {
namespace comm {

namespace sim_detail {

template <typename T>
constexpr int remote_dtype() {
  if constexpr (std::is_same_v<T, float>)
    return PTO_SIM_REMOTE_F32;
  else if constexpr (std::is_same_v<T, double>)
    return PTO_SIM_REMOTE_F64;
  else if constexpr (std::is_integral_v<T> && std::is_signed_v<T> && sizeof(T) == 1)
    return PTO_SIM_REMOTE_I8;
  else if constexpr (std::is_integral_v<T> && std::is_signed_v<T> && sizeof(T) == 2)
    return PTO_SIM_REMOTE_I16;
  else if constexpr (std::is_integral_v<T> && std::is_signed_v<T> && sizeof(T) == 4)
    return PTO_SIM_REMOTE_I32;
  else if constexpr (std::is_integral_v<T> && std::is_signed_v<T> && sizeof(T) == 8)
    return PTO_SIM_REMOTE_I64;
  else if constexpr (std::is_integral_v<T> && sizeof(T) == 1)
    return PTO_SIM_REMOTE_U8;
  else if constexpr (std::is_integral_v<T> && sizeof(T) == 2)
    return PTO_SIM_REMOTE_U16;
  else if constexpr (std::is_integral_v<T> && sizeof(T) == 4)
    return PTO_SIM_REMOTE_U32;
  else if constexpr (std::is_integral_v<T> && sizeof(T) == 8)
    return PTO_SIM_REMOTE_U64;
  else
    return 0;  // the L4 worker stops the kernel: MPI cannot add it
}

// One row of `n` elements: dst[i * ds] (=|+=) src[i * ss].
template <typename D, typename S, AtomicType atomicType>
inline void copy_row(D *dst, int64_t ds, S *src, int64_t ss, int64_t n, std::vector<D> &buf) {
  const bool rdst = PTO_SIM_IS_REMOTE(dst), rsrc = PTO_SIM_IS_REMOTE(src);
  if (!rdst && !rsrc) {
    if constexpr (atomicType == AtomicType::AtomicNone && std::is_same_v<std::remove_cv_t<S>, D>) {
      if (ds == 1 && ss == 1) {
        std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(D));
        return;
      }
    }
    for (int64_t i = 0; i < n; ++i) {
      if constexpr (atomicType == AtomicType::AtomicNone) {
        dst[i * ds] = src[i * ss];
      } else {
        dst[i * ds] += src[i * ss];
      }
    }
    return;
  }
  const uint64_t bytes = static_cast<uint64_t>(n) * sizeof(D);
  if constexpr (atomicType == AtomicType::AtomicNone && std::is_same_v<std::remove_cv_t<S>, D>) {
    if (rdst && !rsrc && ds == 1 && ss == 1) {  // the common TPUT: straight from the source
      pto_sim_remote(PTO_SIM_REMOTE_PUT, 0, reinterpret_cast<uint64_t>(dst), const_cast<D *>(src), bytes, 0);
      pto_sim_remote(PTO_SIM_REMOTE_FLUSH, 0, reinterpret_cast<uint64_t>(dst), nullptr, 0, 0);
      return;
    }
    if (rsrc && !rdst && ds == 1 && ss == 1) {  // the common TGET: straight into the destination
      pto_sim_remote(PTO_SIM_REMOTE_GET, 0, reinterpret_cast<uint64_t>(src), dst, bytes, 0);
      pto_sim_remote(PTO_SIM_REMOTE_FLUSH, 0, reinterpret_cast<uint64_t>(src), nullptr, 0, 0);
      return;
    }
  }
  // Otherwise the row passes through a contiguous local buffer of dst's type.
  buf.resize(static_cast<size_t>(n));
  if (rsrc) {
    // Fetched as src's element type, then converted (as PTO-ISA's assignment converts).
    using SV = std::remove_cv_t<S>;
    std::vector<SV> got(static_cast<size_t>(n));
    if (ss == 1) {
      pto_sim_remote(PTO_SIM_REMOTE_GET, 0, reinterpret_cast<uint64_t>(src), got.data(),
                     static_cast<uint64_t>(n) * sizeof(SV), 0);
    } else {
      for (int64_t i = 0; i < n; ++i)
        pto_sim_remote(PTO_SIM_REMOTE_GET, 0, reinterpret_cast<uint64_t>(src + i * ss), &got[i], sizeof(SV),
                       0);
    }
    pto_sim_remote(PTO_SIM_REMOTE_FLUSH, 0, reinterpret_cast<uint64_t>(src), nullptr, 0, 0);
    for (int64_t i = 0; i < n; ++i) buf[i] = static_cast<D>(got[i]);
  } else {
    for (int64_t i = 0; i < n; ++i) buf[i] = static_cast<D>(src[i * ss]);
  }
  if (!rdst) {
    for (int64_t i = 0; i < n; ++i) {
      if constexpr (atomicType == AtomicType::AtomicNone) {
        dst[i * ds] = buf[i];
      } else {
        dst[i * ds] += buf[i];
      }
    }
    return;
  }
  const int op = atomicType == AtomicType::AtomicNone ? PTO_SIM_REMOTE_PUT : PTO_SIM_REMOTE_ADD;
  const int dtype = atomicType == AtomicType::AtomicNone ? 0 : remote_dtype<D>();
  if (ds == 1) {
    pto_sim_remote(op, dtype, reinterpret_cast<uint64_t>(dst), buf.data(), bytes, 0);
  } else {
    for (int64_t i = 0; i < n; ++i)
      pto_sim_remote(op, dtype, reinterpret_cast<uint64_t>(dst + i * ds), &buf[i], sizeof(D), 0);
  }
  pto_sim_remote(PTO_SIM_REMOTE_FLUSH, 0, reinterpret_cast<uint64_t>(dst), nullptr, 0, 0);
}

}  // namespace sim_detail

template <typename GlobalDstData, typename GlobalSrcData, AtomicType atomicType = AtomicType::AtomicNone>
PTO_INTERNAL void Copy_Data(GlobalDstData &dstTensor, GlobalSrcData &srcTensor) {
  using D = typename GlobalDstData::DType;
  D *dst = dstTensor.data();
  typename GlobalSrcData::DType *src = srcTensor.data();
  int64_t shape[5], ds[5], ss[5];
  for (int d = 0; d < 5; ++d) {
    shape[d] = dstTensor.GetShape(d);
    ds[d] = dstTensor.GetStride(d);
    ss[d] = srcTensor.GetStride(d);
  }
  std::vector<D> buf;  // rows to or from another host only
  for (int64_t i = 0; i < shape[0]; ++i) {
    for (int64_t j = 0; j < shape[1]; ++j) {
      for (int64_t k = 0; k < shape[2]; ++k) {
        for (int64_t l = 0; l < shape[3]; ++l) {
          const int64_t d0 = i * ds[0] + j * ds[1] + k * ds[2] + l * ds[3];
          const int64_t s0 = i * ss[0] + j * ss[1] + k * ss[2] + l * ss[3];
          sim_detail::copy_row<D, typename GlobalSrcData::DType, atomicType>(dst + d0, ds[4], src + s0, ss[4],
                                                                             shape[4], buf);
        }
      }
    }
  }
}

template <typename GlobalDstData, typename GlobalSrcData, typename TileData>
PTO_INTERNAL void TGET_IMPL(GlobalDstData &dst, GlobalSrcData &src, TileData &src1) {
  Copy_Data(dst, src);
}

template <typename GlobalDstData, typename GlobalSrcData, typename TileData>
PTO_INTERNAL void TGET_IMPL(GlobalDstData &dst, GlobalSrcData &src, TileData &ping, TileData &pong) {
  Copy_Data(dst, src);
}

template <DmaEngine engine = DmaEngine::SDMA, typename GlobalDstData, typename GlobalSrcData>
PTO_INTERNAL AsyncEvent TGET_ASYNC_IMPL(GlobalDstData &dst, GlobalSrcData &src, const AsyncSession &session) {
  Copy_Data(dst, src);
  return AsyncEvent(0, engine);
}

template <DmaEngine engine, typename GlobalDstData, typename GlobalSrcData>
PTO_INTERNAL AsyncEvent TGET_ASYNC_IMPL(GlobalDstData &dst, GlobalSrcData &src, const AsyncSession &session,
                                        uint32_t peer) {
  return TGET_ASYNC_IMPL<engine>(dst, src, session);
}

}  // namespace comm
}  // namespace pto
#endif
