// src/l4/edge_trace.cpp — PTO_L4_EDGE_TRACE rows (edge_trace.h).
#include "l4/edge_trace.h"

#include <cstdio>
#include <cstdlib>

namespace pto {
namespace l4 {

EdgeTrace::EdgeTrace() {
  if (const char *dir = std::getenv("PTO_L4_EDGE_TRACE"); dir && *dir) {
    dir_ = dir;
    on_ = true;
  }
}

void EdgeTrace::row(bool send, uint64_t seq, int peer, double post_called, double issued, double completed,
                    double settled, const std::string &what) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "%s\t%llu\t%d\t%.9f\t%.9f\t%.9f\t%.9f\t", send ? "send" : "recv",
                static_cast<unsigned long long>(seq), peer, post_called, issued, completed, settled);
  rows_.push_back(buf + what);
}

void EdgeTrace::save(int rank) const {
  if (!on_) return;
  const std::string path = dir_ + "/edges.rank" + std::to_string(rank) + ".tsv";
  if (FILE *f = std::fopen(path.c_str(), "w")) {
    std::fputs("kind\tseq\tpeer\tpost_called\tissued\tcompleted\tsettled\twhat\n", f);
    for (const std::string &row : rows_) std::fprintf(f, "%s\n", row.c_str());
    std::fclose(f);
  }
}

}  // namespace l4
}  // namespace pto
