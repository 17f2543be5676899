// src/hierarchical/chip_mailbox.cpp — (de)serializing one chip run into a mailbox payload.
#include "hierarchical/chip_mailbox.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

namespace pto {
namespace l3 {
namespace {

class Writer {
 public:
  explicit Writer(ChipMailbox &mb) : mb_(mb) {}
  void bytes(const void *p, size_t n) {
    if (pos_ + n > kMailboxPayloadBytes) {
      throw Error(PTO_INVALID_ARGUMENT, "chip task too large for the process-mode mailbox (" +
                                            std::to_string(kMailboxPayloadBytes) +
                                            " bytes): use fewer arguments or shorter kernel paths");
    }
    std::memcpy(mb_.payload + pos_, p, n);
    pos_ += n;
  }
  void u32(uint32_t v) { bytes(&v, sizeof v); }
  void str(const std::string &s) {
    u32(static_cast<uint32_t>(s.size()));
    bytes(s.data(), s.size());
  }
  uint32_t size() const { return static_cast<uint32_t>(pos_); }

 private:
  ChipMailbox &mb_;
  size_t pos_ = 0;
};

class Reader {
 public:
  explicit Reader(const ChipMailbox &mb) : mb_(mb) {}
  void bytes(void *p, size_t n) {
    if (pos_ + n > mb_.payload_bytes) throw Error(PTO_INTERNAL, "chip mailbox payload truncated");
    std::memcpy(p, mb_.payload + pos_, n);
    pos_ += n;
  }
  uint32_t u32() {
    uint32_t v;
    bytes(&v, sizeof v);
    return v;
  }
  std::string str() {
    std::string s(u32(), '\0');
    bytes(&s[0], s.size());
    return s;
  }

 private:
  const ChipMailbox &mb_;
  size_t pos_ = 0;
};

}  // namespace

void MailboxStats::store(const RunStats &s) {
  tasks_run = s.tasks_run;
  aic_tasks = s.aic_tasks;
  aiv_tasks = s.aiv_tasks;
  mix_tasks = s.mix_tasks;
  orchestration_us = s.orchestration_us;
  device_us = s.device_us;
  total_us = s.total_us;
  effective_us = s.effective_us;
  scheduling_us = s.scheduling_us;
  cores_used = s.cores_used;
  aicpu_threads_used = s.aicpu_threads_used;
  window = s.window;
  heap = s.heap;
  dep_pool = s.dep_pool;
  tensormap = s.tensormap;
  num_cores = static_cast<uint32_t>(std::min<size_t>(s.cores.size(), kMaxCores));
  for (uint32_t i = 0; i < num_cores; ++i) cores[i] = s.cores[i];
}

RunStats MailboxStats::load() const {
  RunStats s;
  s.tasks_run = tasks_run;
  s.aic_tasks = aic_tasks;
  s.aiv_tasks = aiv_tasks;
  s.mix_tasks = mix_tasks;
  s.orchestration_us = orchestration_us;
  s.device_us = device_us;
  s.total_us = total_us;
  s.effective_us = effective_us;
  s.scheduling_us = scheduling_us;
  s.cores_used = cores_used;
  s.aicpu_threads_used = aicpu_threads_used;
  s.window = window;
  s.heap = heap;
  s.dep_pool = dep_pool;
  s.tensormap = tensormap;
  s.cores.assign(cores, cores + num_cores);
  return s;
}

void encode_run(ChipMailbox &mb, const ChipCallable &callable, const ChipStorageTaskArgs &args,
                const ChipCallConfig &config) {
  Writer w(mb);
  w.str(callable.orchestration());
  w.u32(static_cast<uint32_t>(callable.kernels().size()));
  for (const auto &k : callable.kernels()) {
    w.u32(k.func_id);
    w.u32(static_cast<uint32_t>(k.core_type));
    w.str(k.binary_path);
    w.str(k.cost_model_path);
    w.str(k.cost_model_note);
  }
  w.bytes(&config, sizeof config);
  w.u32(static_cast<uint32_t>(args.descs().size()));
  for (const pto_arg_desc &d : args.descs()) w.bytes(&d, sizeof d);
  mb.payload_bytes = w.size();
  mb.op = kOpRun;
}

void decode_run(const ChipMailbox &mb, ChipCallable *callable, ChipStorageTaskArgs *args,
                ChipCallConfig *config) {
  Reader r(mb);
  callable->set_orchestration(r.str());
  const uint32_t nk = r.u32();
  for (uint32_t i = 0; i < nk; ++i) {
    const uint32_t id = r.u32();
    const auto core = static_cast<pto_core_type>(r.u32());
    callable->add_kernel(id, core, r.str());
    std::string twin = r.str(), note = r.str();
    if (!twin.empty() || !note.empty()) callable->set_cost_model(id, std::move(twin), std::move(note));
  }
  r.bytes(config, sizeof *config);
  const uint32_t na = r.u32();
  args->clear();
  for (uint32_t i = 0; i < na; ++i) {
    pto_arg_desc d;
    r.bytes(&d, sizeof d);
    if (d.kind == PTO_ARG_TENSOR || d.kind == PTO_ARG_DEVICE_TENSOR || d.kind == PTO_ARG_SHARED_TENSOR) {
      std::vector<int64_t> shape(d.shape, d.shape + d.ndim);
      const auto add = d.kind == PTO_ARG_TENSOR          ? &ChipStorageTaskArgs::add_tensor
                       : d.kind == PTO_ARG_DEVICE_TENSOR ? &ChipStorageTaskArgs::add_device_tensor
                                                         : &ChipStorageTaskArgs::add_shared_tensor;
      (args->*add)(d.host_ptr, d.nbytes, static_cast<pto_dtype>(d.dtype), shape,
                   static_cast<pto_direction>(d.direction));
    } else {
      args->add_scalar(d.scalar);
    }
  }
}

}  // namespace l3
}  // namespace pto
