// src/core/first_error.h — the first error of an orchestration, kept; later ones dropped.
//
// Both orchestration APIs (host_build_graph's GraphBuilder on the host, tensormap's device
// orchestrator) report the first thing that went wrong and ignore what follows from it: a
// failed add_task makes every later call fail too, and only the cause is worth reading.
#ifndef PTO_CORE_FIRST_ERROR_H
#define PTO_CORE_FIRST_ERROR_H

#include <string>
#include <utility>

#include "pto/error.h"

namespace pto {

struct FirstError {
  pto_status code = PTO_OK;
  std::string message;

  bool ok() const { return code == PTO_OK; }
  // Keeps (code, message) unless an error is already kept.
  void set(pto_status c, std::string m) {
    if (code != PTO_OK) return;
    code = c;
    message = std::move(m);
  }
  // The orchestration called fail(message): ORCHESTRATION_FAILED with its text.
  void orchestration_failed(const char *m) {
    set(PTO_ORCHESTRATION_FAILED, std::string("orchestration failed: ") + (m ? m : "(no message)"));
  }
};

}  // namespace pto
#endif  // PTO_CORE_FIRST_ERROR_H
