// tests/fuzz/fuzz_c_api.cpp — the host program's C API (include/pto/c_api.h), as a C caller
// reaches it: the tensormap runtime's libhost.so opened with dlopen, every function taken with
// dlsym, then random call sequences on two handle slots with random arguments: platforms and
// program paths, device ids, null pointers, sizes that disagree, callables that are broken in
// each way, configs, stats, start / poll / wait / abort, finalize twice, handles used after
// destroy_device_context.
//
// Oracles: every call returns a pto_status, never INTERNAL; a failing call on a live context
// leaves a message; a handle that is not live (null, destroyed) gets INVALID_ARGUMENT; calls
// whose outcome the state decides get it (set_device twice, run before set_device, a run
// while one is in flight, poll without a run); a run of a valid callable with valid arguments
// succeeds and leaves every output as its kernel makes it (each byte + 1: INOUT from the
// caller's values, OUTPUT from zero; INPUT buffers untouched); any invalid argument fails it.
#include <dlfcn.h>
#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "fuzz_common.h"
#include "pto/c_api.h"
#include "pto/chip_worker.h"
#include "pto/kernel_compiler.h"
#include "pto/runtime_builder.h"

namespace {

// Each tensor of the run, as one byte range, bumped by one task.
const char *const kOrch = R"(
#include "pto/orchestration.h"
PTO_DEVICE_ORCHESTRATION(orch) {
  for (uint32_t i = 0; i < orch.num_tensors(); ++i) {
    pto::TensorView v = orch.tensor(i);
    v.dtype = PTO_DTYPE_U8;
    v.offset = 0;
    v.ndim = 1;
    v.shape[0] = static_cast<int64_t>(v.buffer_bytes);
    v.strides[0] = 1;
    orch.submit_task(0, PTO_CORE_AIV, {pto::Arg::inout(v), pto::Arg::i64(v.shape[0])});
  }
}
)";
const char *const kBump = R"(
#include "pto/kernel.h"
PTO_KERNEL(args) {
  uint8_t *x = pto::tensor<uint8_t>(args, 0);
  const int64_t n = pto::scalar_i64(args, 1);
  for (int64_t i = 0; i < n; ++i) x[i] = static_cast<uint8_t>(x[i] + 1);
}
)";

struct Api {
  decltype(&::pto_default_call_config) default_config;
  decltype(&::create_device_context) create;
  decltype(&::set_device) set_device;
  decltype(&::prewarm_runtime) prewarm;
  decltype(&::get_runtime_size) runtime_size;
  decltype(&::run_runtime) run;
  decltype(&::start_runtime) start;
  decltype(&::poll_runtime) poll;
  decltype(&::wait_runtime) wait;
  decltype(&::abort_runtime) abort;
  decltype(&::finalize_device) finalize;
  decltype(&::destroy_device_context) destroy;
  decltype(&::get_last_error_message) last_error;
  decltype(&::get_platform_info) platform_info;
  decltype(&::get_last_trace_json) last_trace;
  decltype(&::get_c_api_version) version;
  pto::RuntimeBinaries bin;
  std::string orch, kernel;
};

template <typename F>
void resolve(void *lib, const char *name, F *out) {
  *out = reinterpret_cast<F>(dlsym(lib, name));
  FUZZ_CHECK(*out != nullptr, "libhost.so lacks %s", name);
}

const Api &api() {
  static const Api a = [] {
    Api x;
    x.bin = pto::RuntimeBuilder("a2a3sim").get_binaries("tensormap_and_ringbuffer");
    void *lib = dlopen(x.bin.host_path.c_str(), RTLD_NOW | RTLD_LOCAL);
    FUZZ_CHECK(lib != nullptr, "dlopen %s: %s", x.bin.host_path.c_str(), dlerror());
    resolve(lib, "pto_default_call_config", &x.default_config);
    resolve(lib, "create_device_context", &x.create);
    resolve(lib, "set_device", &x.set_device);
    resolve(lib, "prewarm_runtime", &x.prewarm);
    resolve(lib, "get_runtime_size", &x.runtime_size);
    resolve(lib, "run_runtime", &x.run);
    resolve(lib, "start_runtime", &x.start);
    resolve(lib, "poll_runtime", &x.poll);
    resolve(lib, "wait_runtime", &x.wait);
    resolve(lib, "abort_runtime", &x.abort);
    resolve(lib, "finalize_device", &x.finalize);
    resolve(lib, "destroy_device_context", &x.destroy);
    resolve(lib, "get_last_error_message", &x.last_error);
    resolve(lib, "get_platform_info", &x.platform_info);
    resolve(lib, "get_last_trace_json", &x.last_trace);
    resolve(lib, "get_c_api_version", &x.version);
    // The device programs carry coverage counters, and libFuzzer reads them after every input:
    // a program unloaded when its last context is finalized would leave it reading freed
    // memory. One reference here, never dropped, keeps them loaded (the sim dlopens by path,
    // so its handles are this one's).
    for (const std::string &prog : {x.bin.aicpu_path, x.bin.aicore_path}) {
      FUZZ_CHECK(dlopen(prog.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE) != nullptr, "dlopen %s: %s",
                 prog.c_str(), dlerror());
    }
    pto::KernelCompiler kc("a2a3sim");
    x.orch = kc.compile_orchestration_source("tensormap_and_ringbuffer", kOrch, "c_api_fuzz_orch");
    x.kernel = kc.compile_incore_source(kBump, "c_api_fuzz_bump", PTO_CORE_AIV);
    return x;
  }();
  return a;
}

// The arguments of one run and what a successful run leaves in them.
struct Run {
  std::vector<pto_arg_desc> args;
  std::vector<std::unique_ptr<std::vector<uint8_t>>> bufs;  // host buffers (stable addresses)
  std::vector<std::vector<uint8_t>> expect;                 // per arg: the buffer after the run
  bool args_valid = true;
  std::string why;  // the first invalid argument
  std::vector<pto_kernel_desc> kernels;
  pto_callable_desc callable{};
  bool callable_valid = true;
  pto_call_config cfg{};
  bool cfg_default = true;
};

int64_t extent(FuzzedDataProvider &in) {
  static const int64_t kOdd[] = {
      -1, INT64_MIN, INT64_MAX, int64_t{1} << 32, int64_t{1} << 61, int64_t{1} << 62, int64_t{1} << 63 >> 1};
  if (in.ConsumeIntegralInRange<int>(0, 9) == 0) return kOdd[in.ConsumeIntegralInRange<size_t>(0, 6)];
  return in.ConsumeIntegralInRange<int64_t>(0, 9);
}

void make_args(FuzzedDataProvider &in, Run *r) {
  const uint32_t n = in.ConsumeIntegralInRange<uint32_t>(0, 5);
  r->args.resize(n);
  r->bufs.resize(n);
  r->expect.resize(n);
  for (uint32_t i = 0; i < n; ++i) {
    pto_arg_desc &a = r->args[i];
    std::memset(&a, 0, sizeof a);
    auto invalid = [&](const std::string &why) {
      if (r->args_valid) r->why = "argument " + std::to_string(i) + ": " + why;
      r->args_valid = false;
    };
    const int kind = in.ConsumeIntegralInRange<int>(0, 9);
    a.kind = kind < 7 ? PTO_ARG_TENSOR : kind < 9 ? PTO_ARG_SCALAR : in.ConsumeIntegral<uint32_t>();
    a.scalar = in.ConsumeIntegral<int64_t>();
    if (a.kind == PTO_ARG_SCALAR) continue;
    // A device or shared tensor is used in place: the kernel's writes land in the buffer, as the
    // copy back of a staged one puts them there, so the expected bytes are the same.
    const bool tensor =
        a.kind == PTO_ARG_TENSOR || a.kind == PTO_ARG_DEVICE_TENSOR || a.kind == PTO_ARG_SHARED_TENSOR;
    if (!tensor) invalid("kind");
    a.dtype = in.ConsumeIntegralInRange<int>(0, 7) == 0 ? in.ConsumeIntegral<uint32_t>()
                                                        : in.ConsumeIntegralInRange<uint32_t>(1, 13);
    const uint32_t esize = a.dtype < PTO_DTYPE_COUNT ? pto_dtype_size(static_cast<pto_dtype>(a.dtype)) : 0;
    if (esize == 0) invalid("dtype");
    a.direction = in.ConsumeIntegralInRange<int>(0, 9) == 0 ? in.ConsumeIntegral<uint32_t>()
                                                            : in.ConsumeIntegralInRange<uint32_t>(0, 2);
    if (a.direction > PTO_DIR_INOUT) invalid("direction");
    a.ndim = in.ConsumeIntegralInRange<int>(0, 9) == 0 ? in.ConsumeIntegralInRange<uint32_t>(0, 20)
                                                       : in.ConsumeIntegralInRange<uint32_t>(0, 3);
    if (a.ndim > PTO_MAX_DIMS) invalid("ndim");
    __int128 elems = 1;
    for (uint32_t d = 0; d < PTO_MAX_DIMS; ++d) {
      a.shape[d] = extent(in);
      if (d >= a.ndim) continue;
      if (a.shape[d] < 0) invalid("negative extent");
      const __int128 cap = static_cast<__int128>(1) << 90, e = a.shape[d] < 0 ? 0 : a.shape[d];
      elems = e != 0 && elems > cap / e ? cap : elems * e;  // saturated: beyond any nbytes anyway
    }
    const __int128 bytes = elems * esize;
    const int how = in.ConsumeIntegralInRange<int>(0, 7);
    a.nbytes = how == 0 ? in.ConsumeIntegral<uint64_t>() : static_cast<uint64_t>(bytes);
    if (bytes != static_cast<__int128>(a.nbytes)) invalid("nbytes is not shape x dtype size");
    // A host buffer of nbytes when that is affordable; else none (which only an empty one may do).
    if (a.nbytes <= (1u << 16) && in.ConsumeIntegralInRange<int>(0, 15) != 0) {
      r->bufs[i] = std::make_unique<std::vector<uint8_t>>(a.nbytes);
      for (uint8_t &b : *r->bufs[i]) b = static_cast<uint8_t>(i * 37 + (&b - r->bufs[i]->data()));
      a.host_ptr = r->bufs[i]->data();
      r->expect[i] = *r->bufs[i];
      for (uint8_t &b : r->expect[i]) {
        if (a.direction == PTO_DIR_INOUT) b = static_cast<uint8_t>(b + 1);
        if (a.direction == PTO_DIR_OUTPUT) b = 1;
      }
    } else if (a.nbytes > 0) {
      invalid("no host buffer");
    }
  }
}

void make_callable(FuzzedDataProvider &in, Run *r) {
  const Api &x = api();
  r->kernels = {pto_kernel_desc{0, PTO_CORE_AIV, x.kernel.c_str(), nullptr, nullptr}};
  r->callable = pto_callable_desc{x.orch.c_str(), r->kernels.data(), 1};
  const int how = in.ConsumeIntegralInRange<int>(0, 15);
  // Kernels 8 and 9 break only a run that submits a task: one with a tensor argument.
  const bool tasks = std::any_of(r->args.begin(), r->args.end(),
                                 [](const pto_arg_desc &a) { return a.kind != PTO_ARG_SCALAR; });
  r->callable_valid = how >= 10 || ((how == 8 || how == 9) && !tasks);
  switch (how) {
    case 0:
      r->callable.orchestration_path = nullptr;
      break;
    case 1:
      r->callable.orchestration_path = "";
      break;
    case 2:
      r->callable.orchestration_path = "/nonexistent/orchestration.so";
      break;
    case 3:
      r->callable.orchestration_path = x.kernel.c_str();  // a kernel, not an orchestration
      break;
    case 4:
      r->callable.kernels = nullptr;  // num_kernels 1
      break;
    case 5:
      r->kernels[0].binary_path = in.ConsumeBool() ? nullptr : "/nonexistent/kernel.so";
      break;
    case 6:
      r->kernels[0].core_type = in.ConsumeIntegralInRange<uint32_t>(3, 1000);
      break;
    case 7:
      r->kernels.push_back(r->kernels[0]);  // func_id 0 twice
      r->callable.kernels = r->kernels.data();
      r->callable.num_kernels = 2;
      break;
    case 8:
      r->callable.num_kernels = 0;  // the orchestration's submit names an unknown kernel
      break;
    case 9:
      r->kernels[0].core_type = PTO_CORE_AIC;  // the orchestration submits to AIV
      break;
    case 10:  // untimed runs do not read the cost model
      r->kernels[0].cost_model_path = "/nonexistent/twin.so";
      r->kernels[0].cost_model_note = "none here";
      break;
    default:
      break;
  }
}

void make_config(FuzzedDataProvider &in, Run *r) {
  api().default_config(&r->cfg);
  r->cfg.timeout_ms = 30000;
  if (in.ConsumeIntegralInRange<int>(0, 3) != 0) return;
  r->cfg_default = false;  // a few fields set any way (fuzz_config checks configs in depth)
  for (int k = in.ConsumeIntegralInRange<int>(1, 3); k > 0; --k) {
    switch (in.ConsumeIntegralInRange<int>(0, 6)) {
      case 0:
        r->cfg.block_dim = in.ConsumeIntegral<int32_t>();
        break;
      case 1:
        r->cfg.aicpu_thread_num = in.ConsumeIntegral<int32_t>();
        break;
      case 2:
        r->cfg.enable_profiling = in.ConsumeIntegral<int32_t>();
        break;
      case 3:
        r->cfg.log_level = in.ConsumeIntegral<int32_t>();
        break;
      case 4:
        r->cfg.sim_seed = in.ConsumeIntegralInRange<int64_t>(-3, 1000);
        break;
      case 5:
        r->cfg.sim_timing = in.ConsumeIntegralInRange<int32_t>(-1, 2);
        break;
      default:
        r->cfg.task_window = in.ConsumeIntegralInRange<uint32_t>(0, 8);
        break;
    }
  }
}

// One handle slot and what the harness knows of it.
struct Slot {
  pto_device_context *ctx = nullptr;
  bool live = false;         // created, not destroyed (ctx may still hold the old, dead value)
  bool device = false;       // set_device succeeded and no finalize since
  bool a2a3 = false;         // of a2a3sim, the platform the kernels were built for
  std::unique_ptr<Run> run;  // started, not finished
};

void check_rc(int rc, const char *call) {
  FUZZ_CHECK(rc >= 0 && rc < PTO_STATUS_COUNT_, "%s returned %d, not a pto_status", call, rc);
  FUZZ_CHECK(rc != PTO_INTERNAL, "%s returned INTERNAL", call);
}

// `ctx` is live: a failure leaves its message there.
void check_failed_with_message(pto_device_context *ctx, bool live, int rc, const char *call) {
  check_rc(rc, call);
  if (rc == PTO_OK || !live) return;
  const char *m = api().last_error(ctx);
  FUZZ_CHECK(m != nullptr && *m != '\0', "%s failed with %s and left no message", call, pto_status_name(rc));
}

void check_outputs(const Run &r, const pto_run_stats *stats) {
  for (size_t i = 0; i < r.args.size(); ++i) {
    if (!r.bufs[i]) continue;
    FUZZ_CHECK(*r.bufs[i] == r.expect[i],
               "argument %zu (direction %u) after the run is not its kernel's result", i,
               r.args[i].direction);
  }
  if (stats)
    FUZZ_CHECK(stats->tasks_run == r.args.size() - std::count_if(r.args.begin(), r.args.end(),
                                                                 [](const pto_arg_desc &a) {
                                                                   return a.kind == PTO_ARG_SCALAR;
                                                                 }),
               "%llu tasks ran", static_cast<unsigned long long>(stats->tasks_run));
}

// A run of `r` that returned rc: what it must be.
void check_run_outcome(const Slot &s, const Run &r, int rc, const pto_run_stats *stats, const char *call) {
  check_failed_with_message(s.ctx, true, rc, call);
  if (r.args_valid && r.callable_valid && r.cfg_default && s.a2a3) {
    FUZZ_CHECK(rc == PTO_OK, "%s of a valid callable with valid arguments failed: %s: %s", call,
               pto_status_name(rc), api().last_error(s.ctx));
  }
  if (!r.args_valid || !r.callable_valid)
    FUZZ_CHECK(rc != PTO_OK, "%s succeeded although %s", call,
               r.args_valid ? "the callable is broken" : r.why.c_str());
  if (rc == PTO_OK) check_outputs(r, stats);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  api();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  FuzzedDataProvider in(data, size);
  const Api &x = api();
  Slot slots[2];
  for (int op = 0; op < 24 && in.remaining_bytes() > 0; ++op) {
    Slot &s = slots[in.ConsumeBool() ? 1 : 0];
    // A null handle now and then, whatever the slot holds.
    pto_device_context *ctx = in.ConsumeIntegralInRange<int>(0, 15) == 0 ? nullptr : s.ctx;
    const bool live = ctx != nullptr && s.live;
    int rc = PTO_OK;
    switch (in.ConsumeIntegralInRange<int>(0, 12)) {
      case 0: {  // create (into a slot that holds none: a live one is destroyed first)
        if (s.live) x.destroy(s.ctx);
        s = Slot{};
        const int p = in.ConsumeIntegralInRange<int>(0, 7);
        const char *platform = p < 4    ? "a2a3sim"
                               : p == 4 ? "a5sim"
                               : p == 5 ? "bogus"
                               : p == 6 ? ""
                                        : nullptr;
        const int a = in.ConsumeIntegralInRange<int>(0, 7);
        const char *aicpu = a == 0 ? nullptr : a == 1 ? "/nonexistent/libaicpu.so" : x.bin.aicpu_path.c_str();
        const char *aicore = a == 2 ? nullptr : x.bin.aicore_path.c_str();
        const bool out_null = in.ConsumeIntegralInRange<int>(0, 15) == 0;
        rc = x.create(platform, aicpu, aicore, out_null ? nullptr : &s.ctx);
        check_rc(rc, "create_device_context");
        const bool valid = !out_null && platform && aicpu && aicore && p <= 4;
        FUZZ_CHECK((rc == PTO_OK) == valid, "create_device_context(%s) returned %s",
                   platform ? platform : "null", pto_status_name(rc));
        s.live = rc == PTO_OK;
        s.a2a3 = p < 4;
        if (s.live) FUZZ_CHECK(s.ctx != nullptr, "create_device_context: OK with no context");
        break;
      }
      case 1: {  // set_device
        int32_t clusters = 0, threads = 0, devices = 0;
        if (live) x.platform_info(ctx, &clusters, &threads, &devices);
        const int pick = in.ConsumeIntegralInRange<int>(0, 5);
        const int id = pick == 0   ? in.ConsumeIntegral<int>()
                       : pick == 1 ? devices
                                   : in.ConsumeIntegralInRange<int>(-1, 2);
        rc = x.set_device(ctx, id);
        check_failed_with_message(ctx, live, rc, "set_device");
        if (!live) {
          FUZZ_CHECK(rc == PTO_INVALID_ARGUMENT, "set_device on a dead handle: %s", pto_status_name(rc));
        } else if (s.device) {
          FUZZ_CHECK(rc == PTO_INVALID_ARGUMENT, "set_device twice: %s", pto_status_name(rc));
        } else if (id < 0 || id >= devices) {
          FUZZ_CHECK(rc == PTO_DEVICE_OUT_OF_RANGE, "set_device(%d) of %d devices: %s", id, devices,
                     pto_status_name(rc));
        }
        if (live && rc == PTO_OK) s.device = true;
        break;
      }
      case 2:
      case 3: {  // run_runtime / start_runtime
        auto r = std::make_unique<Run>();
        make_args(in, r.get());
        make_callable(in, r.get());
        make_config(in, r.get());
        const bool null_callable = in.ConsumeIntegralInRange<int>(0, 15) == 0;
        const bool null_cfg = in.ConsumeIntegralInRange<int>(0, 15) == 0;
        const bool null_args = !r->args.empty() && in.ConsumeIntegralInRange<int>(0, 15) == 0;
        const bool null_stats = in.ConsumeIntegralInRange<int>(0, 7) == 0;
        if (null_callable || null_cfg || null_args) r->callable_valid = false;
        const pto_callable_desc *c = null_callable ? nullptr : &r->callable;
        const pto_arg_desc *a = null_args ? nullptr : r->args.data();
        const pto_call_config *cfg = null_cfg ? nullptr : &r->cfg;
        const auto n = static_cast<uint32_t>(r->args.size());
        const bool start = in.ConsumeBool();
        pto_run_stats stats{};
        rc = start ? x.start(ctx, c, a, n, cfg) : x.run(ctx, c, a, n, cfg, null_stats ? nullptr : &stats);
        const char *call = start ? "start_runtime" : "run_runtime";
        check_failed_with_message(ctx, live, rc, call);
        if (!live) {
          FUZZ_CHECK(rc == PTO_INVALID_ARGUMENT, "%s on a dead handle: %s", call, pto_status_name(rc));
        } else if (!s.device) {
          FUZZ_CHECK(rc == PTO_NOT_INITIALIZED, "%s before set_device: %s", call, pto_status_name(rc));
        } else if (s.run) {
          FUZZ_CHECK(rc == PTO_INVALID_ARGUMENT, "%s while a run is in flight: %s", call,
                     pto_status_name(rc));
        } else if (!start) {
          check_run_outcome(s, *r, rc, null_stats ? nullptr : &stats, call);
        } else if (rc == PTO_OK) {
          s.run = std::move(r);  // finished by poll (or by finalize / destroy)
        } else {
          FUZZ_CHECK(!(r->args_valid && r->callable_valid && r->cfg_default && s.a2a3),
                     "start_runtime of a valid run: %s: %s", pto_status_name(rc), x.last_error(ctx));
        }
        break;
      }
      case 4: {  // poll_runtime
        const bool block = in.ConsumeBool(), null_done = in.ConsumeIntegralInRange<int>(0, 15) == 0;
        const bool null_stats = in.ConsumeIntegralInRange<int>(0, 7) == 0;
        int done = -1;
        pto_run_stats stats{};
        rc = x.poll(ctx, block, null_done ? nullptr : &done, null_stats ? nullptr : &stats);
        check_failed_with_message(ctx, live, rc, "poll_runtime");
        if (!live || null_done) {
          FUZZ_CHECK(rc == PTO_INVALID_ARGUMENT, "poll_runtime(%s): %s", live ? "done = null" : "dead handle",
                     pto_status_name(rc));
        } else if (!s.run) {
          FUZZ_CHECK(rc == PTO_INVALID_ARGUMENT || rc == PTO_NOT_INITIALIZED,
                     "poll_runtime without a run: %s", pto_status_name(rc));
        } else {
          FUZZ_CHECK(done == 0 || done == 1, "poll_runtime: done = %d", done);
          FUZZ_CHECK(!block || done == 1, "a blocking poll_runtime returned before the run ended");
          if (done == 1) {
            check_run_outcome(s, *s.run, rc, null_stats ? nullptr : &stats, "poll_runtime");
            s.run.reset();
          }
        }
        break;
      }
      case 5: {  // wait_runtime
        const bool null_ended = in.ConsumeIntegralInRange<int>(0, 15) == 0;
        int ended = -1;
        rc = x.wait(ctx, in.ConsumeIntegralInRange<uint64_t>(0, 2000000), null_ended ? nullptr : &ended);
        check_failed_with_message(ctx, live, rc, "wait_runtime");
        if (!live || null_ended)
          FUZZ_CHECK(rc == PTO_INVALID_ARGUMENT, "wait_runtime: %s", pto_status_name(rc));
        if (live && !null_ended && s.run && rc == PTO_OK)
          FUZZ_CHECK(ended == 0 || ended == 1, "ended = %d", ended);
        break;
      }
      case 6: {  // abort_runtime
        rc = x.abort(ctx);
        check_failed_with_message(ctx, live, rc, "abort_runtime");
        if (!live)
          FUZZ_CHECK(rc == PTO_INVALID_ARGUMENT, "abort_runtime on a dead handle: %s", pto_status_name(rc));
        if (live && s.run) {
          FUZZ_CHECK(rc == PTO_ABORTED || rc == PTO_OK, "abort_runtime of a started run: %s",
                     pto_status_name(rc));
          s.run.reset();
        }
        break;
      }
      case 7:  // finalize_device (again and again)
        rc = x.finalize(ctx);
        check_failed_with_message(ctx, live, rc, "finalize_device");
        if (!live)
          FUZZ_CHECK(rc == PTO_INVALID_ARGUMENT, "finalize_device on a dead handle: %s", pto_status_name(rc));
        if (live) FUZZ_CHECK(rc == PTO_OK, "finalize_device: %s: %s", pto_status_name(rc), x.last_error(ctx));
        if (live) s.device = false, s.run.reset();
        break;
      case 8:  // destroy_device_context; the slot keeps the dead handle for later calls
        x.destroy(ctx);
        if (live) s.live = s.device = false, s.run.reset();
        break;
      case 9: {  // the read-only calls, null outputs included
        int32_t a = 0, b = 0, c = 0;
        const int which = in.ConsumeIntegralInRange<int>(0, 7);
        rc = x.platform_info(ctx, which & 1 ? nullptr : &a, which & 2 ? nullptr : &b,
                             which & 4 ? nullptr : &c);
        check_rc(rc, "get_platform_info");
        FUZZ_CHECK((rc == PTO_OK) == live, "get_platform_info: %s", pto_status_name(rc));
        FUZZ_CHECK(x.last_error(ctx) != nullptr && x.last_trace(ctx) != nullptr, "a null string");
        FUZZ_CHECK(std::strlen(x.last_error(ctx)) < (1u << 20), "an unterminated message");
        FUZZ_CHECK(x.version() == PTO_C_API_VERSION, "get_c_api_version %d", x.version());
        break;
      }
      case 10: {  // get_runtime_size of any config
        pto_call_config c;
        x.default_config(&c);
        c.max_tasks = in.ConsumeIntegral<uint32_t>();
        c.max_successors = in.ConsumeIntegral<uint32_t>();
        c.max_args_per_task = in.ConsumeIntegral<uint32_t>();
        x.runtime_size(in.ConsumeBool() ? &c : nullptr);
        break;
      }
      case 11: {  // prewarm_runtime of any config (a warm-up run, checked as a run's)
        auto r = std::make_unique<Run>();
        make_config(in, r.get());
        const bool null_cfg = in.ConsumeIntegralInRange<int>(0, 15) == 0;
        rc = x.prewarm(ctx, null_cfg ? nullptr : &r->cfg);
        check_failed_with_message(ctx, live, rc, "prewarm_runtime");
        if (!live) {
          FUZZ_CHECK(rc == PTO_INVALID_ARGUMENT, "prewarm_runtime on a dead handle: %s", pto_status_name(rc));
        } else if (!s.device) {
          FUZZ_CHECK(rc == PTO_NOT_INITIALIZED, "prewarm_runtime before set_device: %s", pto_status_name(rc));
        } else if (s.run) {
          FUZZ_CHECK(rc == PTO_INVALID_ARGUMENT, "prewarm_runtime while a run is in flight: %s",
                     pto_status_name(rc));
        } else if (null_cfg) {
          FUZZ_CHECK(rc == PTO_INVALID_ARGUMENT, "prewarm_runtime(null config): %s", pto_status_name(rc));
        } else if (r->cfg_default && s.a2a3) {
          FUZZ_CHECK(rc == PTO_OK, "prewarm_runtime of the default config: %s: %s", pto_status_name(rc),
                     x.last_error(ctx));
        }
        break;
      }
      default:
        break;
    }
  }
  for (Slot &s : slots) {
    if (s.live) x.destroy(s.ctx);  // finalizes a run still in flight
  }
  return 0;
}
