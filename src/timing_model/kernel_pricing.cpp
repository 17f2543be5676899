// src/timing_model/kernel_pricing.cpp — loads cost-model twins and prices invocations with them.
#include "timing_model/kernel_pricing.h"

#include <dlfcn.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
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
  for (uint32_t p = 0; p < kPricePipes; ++p)  // the same pipes, in the same order (below)
    price->pipe_ns[p] = saturated_ns(static_cast<double>(c.pipe_busy_cycles[p]) * ns_per_cycle);
  return static_cast<uint64_t>(std::llround(static_cast<double>(c.total_cycles) * ns_per_cycle));
}
static_assert(kPricePipes == PTO_COSTMODEL_PIPE_COUNT && PTO_COSTMODEL_PIPE_SCALAR == 0 &&
                  PTO_COSTMODEL_PIPE_VEC == 5 && PTO_COSTMODEL_PIPE_MTE3 == 6,
              "KernelPrice::pipe_ns is the probe's pipes in its order (trace_json.cpp names them)");

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

// One cost of PTO_SIM_KERNEL_COSTS: "ns", "ns+k*aI" or "k*aI" (ns: an integer; k: a
// non-negative decimal; I: an argument index). False when malformed.
bool parse_kernel_cost(const std::string &text, SimKernelCost *out) {
  const auto digits = [](const std::string &t) {
    return !t.empty() && t.find_first_not_of("0123456789") == std::string::npos;
  };
  const size_t star = text.find('*');
  const size_t plus = text.find('+');
  std::string base = text, term;
  if (star != std::string::npos) {
    if (plus != std::string::npos && plus > star) return false;
    base = plus == std::string::npos ? "" : text.substr(0, plus);
    term = text.substr(plus == std::string::npos ? 0 : plus + 1);
    if (plus != std::string::npos && base.empty()) return false;
  } else if (plus != std::string::npos) {
    return false;
  }
  if (!base.empty()) {
    if (!digits(base)) return false;
    errno = 0;
    out->base_ns = strtoull(base.c_str(), nullptr, 10);
    if (errno != 0) return false;
  }
  if (!term.empty()) {
    const size_t at = term.find("*a");
    if (at == std::string::npos || at == 0) return false;
    const std::string k = term.substr(0, at), index = term.substr(at + 2);
    if (k.find_first_not_of("0123456789.") != std::string::npos || !digits(index) || index.size() > 5)
      return false;
    char *end = nullptr;
    out->ns_per_unit = strtod(k.c_str(), &end);
    if (*end != '\0' || !std::isfinite(out->ns_per_unit)) return false;
    out->arg = static_cast<int32_t>(std::stol(index));
  }
  return true;
}

// PTO_SIM_KERNEL_COSTS: "func_id=cost[,func_id=cost...]", the virtual time of those kernels in
// timing mode, keyed by their entry address: cost is "ns", "ns+k*aI" or "k*aI" (plus k ns per
// unit of the task's argument I, a size the kernel reads). False, with *error, when malformed or
// naming a func_id the callable lacks.
bool env_kernel_costs(const std::map<uint32_t, KernelEntry> &kernels, std::vector<SimKernelCost> *out,
                      std::string *error) {
  const char *env = getenv("PTO_SIM_KERNEL_COSTS");
  if (env == nullptr || *env == '\0') return true;
  return parse_kernel_costs(env, kernels, out, error);
}

}  // namespace

bool parse_kernel_costs(const std::string &all, const std::map<uint32_t, KernelEntry> &kernels,
                        std::vector<SimKernelCost> *out, std::string *error) {
  std::map<uint64_t, std::pair<uint32_t, SimKernelCost>> by_entry;  // entry -> (func_id, cost)
  for (size_t at = 0; at <= all.size();) {
    size_t end = all.find(',', at);
    if (end == std::string::npos) end = all.size();
    const std::string item = all.substr(at, end - at);
    at = end + 1;
    const size_t eq = item.find('=');
    char *e1 = nullptr;
    errno = 0;
    const std::string id_text = item.substr(0, eq == std::string::npos ? 0 : eq);
    const std::string cost_text = eq == std::string::npos ? "" : item.substr(eq + 1);
    const unsigned long long id = strtoull(id_text.c_str(), &e1, 10);
    SimKernelCost cost;
    if (eq == std::string::npos || id_text.empty() || *e1 != '\0' || errno != 0 || id > UINT32_MAX ||
        id_text[0] == '-' || cost_text.empty() || !parse_kernel_cost(cost_text, &cost)) {
      *error = "PTO_SIM_KERNEL_COSTS=" + all + ": '" + item +
               "' is not func_id=ns, func_id=ns+k*aI or func_id=k*aI (a kernel's func_id and its virtual "
               "time: ns, plus k ns per unit of its argument I; comma-separated)";
      return false;
    }
    const auto k = kernels.find(static_cast<uint32_t>(id));
    if (k == kernels.end()) {
      *error = "PTO_SIM_KERNEL_COSTS=" + all + ": the callable has no kernel with func_id " + id_text;
      return false;
    }
    cost.entry = k->second.loaded.entry_addr;
    const auto [it, fresh] = by_entry.emplace(cost.entry, std::make_pair(k->first, cost));
    const SimKernelCost &was = it->second.second;
    if (!fresh &&
        (was.base_ns != cost.base_ns || was.arg != cost.arg || was.ns_per_unit != cost.ns_per_unit)) {
      *error = "PTO_SIM_KERNEL_COSTS=" + all + ": func_ids " + std::to_string(it->second.first) + " and " +
               id_text + " are the same kernel binary; give them the same cost";
      return false;
    }
  }
  for (const auto &kv : by_entry) out->push_back(kv.second.second);
  return true;
}

pto_status set_kernel_costs(const pto_callable_desc &callable, const std::map<uint32_t, KernelEntry> &kernels,
                            SimTiming *t, pto_run_stats *stats, std::string *error) {
  if (!env_kernel_costs(kernels, &t->kernel_costs, error)) return PTO_INVALID_ARGUMENT;
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
      return PTO_LOAD_FAILED;
    }
    SimKernelCost c;
    c.entry = entry;
    c.model_price = isa_model_price;
    c.model = m;
    c.cube = kernels.at(k.func_id).core_type == PTO_CORE_AIC;
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
  return PTO_OK;
}

}  // namespace pto
