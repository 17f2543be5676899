// src/l4/transfer_header.h — the 1 KiB header of an L4 transfer: written by the sender, checked on receipt.
//
// Fields, little-endian "<iiqqqq": status (0: the data is valid; 1: the sender's producer failed),
// text length, transfer number, array index, payload bytes, tile index; then up to 984 bytes of
// the failure's text. docs/guide/l4.md, "Messages" and "Failures".
#ifndef PTO_L4_TRANSFER_HEADER_H
#define PTO_L4_TRANSFER_HEADER_H

#include <cstddef>
#include <string>

#include "l4/progress.h"

namespace pto {
namespace l4 {

constexpr size_t kHeaderBytes = 1024;

// Writes the header of send `p` (its upstream error, if any, as the failure) to out[kHeaderBytes].
void write_header(const TransferPost &p, char *out);

// Why the header received for receive `p` fails it: a different transfer, array, tile or size
// (the ranks diverged), or the sender's failure; "" when the data is valid.
std::string header_failure(const char *in, const TransferPost &p);

}  // namespace l4
}  // namespace pto
#endif  // PTO_L4_TRANSFER_HEADER_H
