// src/host/kernel_pricing.cpp — loads cost-model twins and prices invocations with them.
#include "host/kernel_pricing.h"

#include <dlfcn.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <set>

#include "pto/kernel.h"
#include "pto_costmodel_shim/pto_costmodel_probe.h"

namespace pto {
namespace {

// A loaded twin: the kernel's entry and the probe's calls, all in the twin's own binary (its
// recorders are thread_local there). Loaded once per process and never unloaded, like kernels.
struct IsaModel {
  void (*begin)() = nullptr;
  void (*entry)(int64_t *) = nullptr;
  int (*end)(PtoCostmodelCycles *, size_t) = nullptr;
};

uint32_t saturated_ns(double ns) {
  return ns >= static_cast<double>(UINT32_MAX) ? UINT32_MAX : static_cast<uint32_t>(ns + 0.5);
}

// SimKernelCost::model_price for a twin: on the core's thread, before the kernel itself runs.
uint64_t isa_model_price(const void *model, int64_t *args, double cycles_per_us, KernelPrice *price) {
  const auto &m = *static_cast<const IsaModel *>(model);
  PtoCostmodelCycles c{};
  m.begin();
  m.entry(args);
  m.end(&c, sizeof c);  // sizes were checked when the twin was loaded
  price->source = PTO_PRICE_ISA_MODEL;
  price->cycles = c.total_cycles;
  price->stuck = static_cast<uint32_t>(c.stuck_events);
  // The platform's clock (its timing profile); else the model's own (PTO-ISA's arch config).
  const double mhz = cycles_per_us > 0 ? cycles_per_us : c.cycles_per_us;
  const double ns_per_cycle = mhz > 0 ? 1e3 / mhz : 1.0;
  for (uint32_t p = 0; p < kPricePipes && p < PTO_COSTMODEL_PIPE_COUNT; ++p)
    price->pipe_ns[p] = saturated_ns(static_cast<double>(c.pipe_busy_cycles[p]) * ns_per_cycle);
  return static_cast<uint64_t>(std::llround(static_cast<double>(c.total_cycles) * ns_per_cycle));
}
static_assert(kPricePipes == PTO_COSTMODEL_PIPE_COUNT, "KernelPrice carries every pipe the probe reports");
static_assert(PTO_COSTMODEL_PIPE_MTE2 == 1 && PTO_COSTMODEL_PIPE_MTE3 == 6,
              "the trace names pipes in this order");

// The twin at `path`, loaded (and checked with one empty probe call) on first use.
const IsaModel *load_isa_model(const std::string &path, std::string *error) {
  static std::mutex mu;
  static std::map<std::string, std::unique_ptr<IsaModel>> loaded;
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = loaded.find(path); it != loaded.end()) return it->second.get();
  void *h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr) {
    *error = "cannot load it: " + std::string(dlerror());
    return nullptr;
  }
  auto m = std::make_unique<IsaModel>();
  m->begin = reinterpret_cast<void (*)()>(dlsym(h, "pto_costmodel_begin"));
  m->end = reinterpret_cast<int (*)(PtoCostmodelCycles *, size_t)>(dlsym(h, "pto_costmodel_end"));
  m->entry = reinterpret_cast<void (*)(int64_t *)>(dlsym(h, PTO_ABI_KERNEL_ENTRY_SYMBOL));
  if (m->begin == nullptr || m->end == nullptr || m->entry == nullptr) {
    dlclose(h);
    *error =
        "it is not a cost-model twin (it must export pto_costmodel_begin, pto_costmodel_end and "
        "kernel_entry; build it with KernelCompiler::compile_incore_cost_model)";
    return nullptr;
  }
  PtoCostmodelCycles probe{};
  m->begin();
  if (m->end(&probe, sizeof probe) != 0) {
    dlclose(h);
    *error =
        "its pto_costmodel_end reports a different PtoCostmodelCycles (built against another "
        "pto_costmodel_probe.h; rebuild it)";
    return nullptr;
  }
  return (loaded[path] = std::move(m)).get();
}

void append_note(pto_run_stats *stats, const std::string &line) {
  const size_t used = strnlen(stats->price_note, sizeof stats->price_note);
  snprintf(stats->price_note + used, sizeof stats->price_note - used, "%s%s", used ? "; " : "", line.c_str());
}

}  // namespace

bool add_isa_model_costs(const pto_callable_desc &callable, const std::map<uint32_t, KernelEntry> &kernels,
                         SimTiming *t, pto_run_stats *stats, std::string *error) {
  std::map<uint64_t, uint32_t> source_of;  // entry -> pto_price_source
  for (const SimKernelCost &c : t->kernel_costs) source_of[c.entry] = PTO_PRICE_TABLE;
  std::set<std::string> said;
  for (uint32_t i = 0; i < callable.num_kernels; ++i) {
    const pto_kernel_desc &k = callable.kernels[i];
    const uint64_t entry = kernels.at(k.func_id).loaded.entry_addr;
    if (k.cost_model_note != nullptr && *k.cost_model_note && said.insert(k.cost_model_note).second) {
      append_note(stats,
                  "kernel " + std::to_string(k.func_id) + ": no cost model (" + k.cost_model_note + ")");
    }
    if (k.cost_model_path == nullptr || *k.cost_model_path == '\0' || source_of.count(entry)) continue;
    std::string why;
    const IsaModel *m = load_isa_model(k.cost_model_path, &why);
    if (m == nullptr) {
      *error = "kernel " + std::to_string(k.func_id) + "'s cost model " + k.cost_model_path + ": " + why;
      return false;
    }
    SimKernelCost c;
    c.entry = entry;
    c.model_price = isa_model_price;
    c.model = m;
    t->kernel_costs.push_back(c);
    source_of[entry] = PTO_PRICE_ISA_MODEL;
  }
  stats->num_kernel_prices = 0;
  for (const auto &[func_id, e] : kernels) {  // by func_id
    if (stats->num_kernel_prices == PTO_STATS_MAX_KERNELS) break;
    const auto it = source_of.find(e.loaded.entry_addr);
    stats->kernel_price_func[stats->num_kernel_prices] = func_id;
    stats->kernel_price_source[stats->num_kernel_prices++] =
        it == source_of.end() ? static_cast<uint32_t>(PTO_PRICE_HOST_TIME) : it->second;
  }
  return true;
}

}  // namespace pto
