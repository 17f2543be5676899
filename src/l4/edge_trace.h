// src/l4/edge_trace.h — PTO_L4_EDGE_TRACE: a row per finished transfer half (bench/l4/edge_breakdown.py).
//
// With PTO_L4_EDGE_TRACE=<dir> the progress thread adds a row per finished transfer half and
// close() saves them, after the thread joined, to <dir>/edges.rank<r>.tsv. Off (the default):
// one test of on() per post and per finished transfer.
#ifndef PTO_L4_EDGE_TRACE_H
#define PTO_L4_EDGE_TRACE_H

#include <cstdint>
#include <string>
#include <vector>

namespace pto {
namespace l4 {

class EdgeTrace {
 public:
  EdgeTrace();  // reads PTO_L4_EDGE_TRACE
  bool on() const { return on_; }
  // The progress thread only. Times in seconds (steady clock): post() entered, the MPI call
  // issued, the requests completed, the transfer settled.
  void row(bool send, uint64_t seq, int peer, double post_called, double issued, double completed,
           double settled, const std::string &what);
  // After the progress thread joined.
  void save(int rank) const;

 private:
  std::string dir_;
  bool on_ = false;
  std::vector<std::string> rows_;
};

}  // namespace l4
}  // namespace pto
#endif  // PTO_L4_EDGE_TRACE_H
