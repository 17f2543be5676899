// src/l4/transfer_header.cpp — writing and checking a transfer's header (transfer_header.h).
#include "l4/transfer_header.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace pto {
namespace l4 {
namespace {

struct HeaderFields {  // little-endian "<iiqqqq"
  int32_t status;      // 0: the data is valid; 1: the sender's producer failed (text says why)
  int32_t text_len;
  int64_t seq;
  int64_t data_index;
  int64_t nbytes;
  int64_t tile;  // of a distributed array (0 otherwise)
};
static_assert(sizeof(HeaderFields) == 40, "the header's fixed fields, then the error text");
constexpr size_t kHeaderText = kHeaderBytes - sizeof(HeaderFields);

}  // namespace

void write_header(const TransferPost &p, char *out) {
  HeaderFields h{};
  h.status = p.error.empty() ? 0 : 1;
  h.text_len = static_cast<int32_t>(std::min(p.error.size(), kHeaderText));
  h.seq = static_cast<int64_t>(p.seq);
  h.data_index = static_cast<int64_t>(p.data_index);
  h.nbytes = static_cast<int64_t>(p.nbytes);
  h.tile = static_cast<int64_t>(p.tile);
  std::memcpy(out, &h, sizeof h);
  std::memcpy(out + sizeof h, p.error.data(), static_cast<size_t>(h.text_len));
}

std::string header_failure(const char *in, const TransferPost &p) {
  HeaderFields h;
  std::memcpy(&h, in, sizeof h);
  if (h.seq != static_cast<int64_t>(p.seq) || h.data_index != static_cast<int64_t>(p.data_index) ||
      h.nbytes != static_cast<int64_t>(p.nbytes) || h.tile != static_cast<int64_t>(p.tile))
    return "rank " + std::to_string(p.peer) + " sent transfer " + std::to_string(h.seq) + " of array " +
           std::to_string(h.data_index) + " tile " + std::to_string(h.tile) + " (" +
           std::to_string(h.nbytes) +
           " bytes) instead: the ranks' orchestration functions diverged (every rank must submit the "
           "same tasks and allocations in the same order)";
  if (h.status == 0) return "";
  const size_t len = std::min(static_cast<size_t>(std::max(h.text_len, 0)), kHeaderText);
  const char *what = p.data_index == kTokenIndex ? "the task it follows failed on rank "
                                                  : "the data is not valid on rank ";
  return what + std::to_string(p.peer) + ": " + std::string(in + sizeof h, len);
}

}  // namespace l4
}  // namespace pto
