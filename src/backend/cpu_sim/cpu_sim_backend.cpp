// src/backend/cpu_sim/cpu_sim_backend.cpp — the cpu_sim backend: the simulated chips (a2a3sim, a5sim).
#include <memory>
#include <string>

#include "pto/backend.h"
#include "pto/error.h"

namespace pto {
namespace {

class CpuSimBackend final : public Backend {
 public:
  const char *name() const override { return "cpu_sim"; }
  // src/platform/sim/; the runtime programs are built into <root>/sim/<runtime>/.
  const char *program_dir() const override { return "sim"; }
  bool host_compiled_kernels() const override { return true; }
  void check(const BackendOptions &o) const override {
    Backend::check(o);
    if (o.host_threads != 0) {
      // The fiber pool that runs every simulated AICPU thread and core is created once per
      // process, sized by PTO_SIM_WORKERS (docs/design/sim_execution.md); one compile cannot resize it.
      throw Error(PTO_NOT_SUPPORTED, "CompileOptions.host_threads " + std::to_string(o.host_threads) +
                                         ": cpu_sim sizes its fiber pool once per process; set "
                                         "PTO_SIM_WORKERS before the first worker starts and leave "
                                         "host_threads at 0");
    }
  }
};

std::unique_ptr<Backend> make_cpu_sim() {
  return std::make_unique<CpuSimBackend>();
}

const BackendRegistrar kRegistrar("cpu_sim", &make_cpu_sim);

}  // namespace
}  // namespace pto
