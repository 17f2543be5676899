// tests/cpp/test_tile_pipes.cpp — PTO-ISA's TPUSH/TPOP/TFREE between the parts of a MIX task on
// the sim (include/pto/sim_tile_pipes.h, src/platform/sim/tile_pipes_sim.h): the AIC part pushes
// its product to both AIV parts, each adds its half of C and pushes the sum back, the AIC part
// pops the whole tile; many such tasks over several clusters give the sequential result on both
// runtimes and both platforms, also with one pool worker for every core (a wait must suspend
// the core, not its OS thread) and with a thread per core. A pipe wait no part can end fails the
// task naming the part and the pipe (TPOP, TPUSH, outside a MIX task), promptly, and the worker
// runs the next graph.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <tuple>
#include <vector>

#include "common/scoped_env.h"
#include "common/tile_toolchain.h"
#include "pto/chip_worker.h"
#include "pto/kernel_compiler.h"

namespace {

constexpr int kN = 32;  // tiles are kN x kN floats

// One source, compiled for the AIC core (__DAV_CUBE__) and for the AIV cores (__DAV_VEC__).
// args: a, b, c (inout), d (out), the identity, mode.
//   mode 0: AIC: p = a @ b, TPUSH p split in halves (C2V, FlagID 0); AIV lane l: TPOP its half,
//           c_half += it, TPUSH the sum (V2C, FlagID 2, halves); AIC: TPOP the whole sum into L1,
//           d = sum @ I (through L0A/L0B, so d equals c).
//   mode 1: AIC pushes once and returns; each AIV lane pops twice: its second TPOP waits for ever.
//   mode 2: AIC pushes three tiles into the two-slot pipe; the AIV lanes return at once.
//   mode 3: AIC pushes three tiles; each AIV lane pops its three halves without a TFREE and adds
//           them to its half of C (a2a3's protocol: the TPOP releases the slot).
//   mode 4: as mode 0's first half, through a pipe whose one slot is in GM (the task's tile of D):
//           AIC pushes p split in halves; AIV lane l pops its half, adds it to its half of C. On
//           a2a3 the lane register (get_subblockid) reads 0 on both lanes, so the pipe adds no lane
//           offset and the kernel gives its own (setEntryOffset), as kernels for that chip do; on
//           a5 the register reads the lane and the pipe adds it. A lane that reads another
//           value than its chip's writes NaN over its half of C.
const char *const kPipeKernel = R"(
#include <cstdint>
#include <pto/pto-inst.hpp>
#include <pto/common/fifo.hpp>

#include "intrinsic.h"
#include "tensor.h"

using namespace pto;

namespace {
constexpr int N = 32, H = N / 2;
using Acc = TileAcc<float, N, N, N, N>;
using Mat = Tile<TileType::Mat, float, N, N, BLayout::ColMajor, N, N, SLayout::RowMajor, 512>;
using Left = TileLeft<float, N, N, N, N>;
using Right = TileRight<float, N, N, N, N>;
using HalfTile = Tile<TileType::Vec, float, H, N, BLayout::RowMajor, H, N>;
using Down = TPipe<0, Direction::DIR_C2V, sizeof(float) * N * N, 2>;
using Up = TPipe<2, Direction::DIR_V2C, sizeof(float) * N * N, 2>;
using GmDown = TPipe<4, Direction::DIR_C2V, sizeof(float) * N * N, 1>;
using GlobalTile = GlobalTensor<float, Shape<1, 1, 1, N, N>, Stride<N * N, N * N, N * N, N, 1>>;
using GlobalHalf = GlobalTensor<float, Shape<1, 1, 1, H, N>, Stride<H * N, H * N, H * N, N, 1>>;

__gm__ float *data_of(__gm__ int64_t *args, int i) {
  auto *t = reinterpret_cast<__gm__ ChipTensor *>(args[i]);
  return reinterpret_cast<__gm__ float *>(t->buffer.addr) + t->start_offset;
}

// dst (an Acc tile) = x (in L1) @ y (in GM): through L0A and L0B.
void matmul(Acc &dst, Mat &x, __gm__ float *y) {
  Mat y_mat;
  TASSIGN(y_mat, 0x2000);
  GlobalTile y_gm(y);
  TLOAD(y_mat, y_gm);
  Left left;
  Right right;
  TASSIGN(left, 0x0);
  TASSIGN(right, 0x0);
  TMOV(left, x);
  TMOV(right, y_mat);
  TMATMUL(dst, left, right);
}
}  // namespace

extern "C" __aicore__ void kernel_entry(__gm__ int64_t *args) {
  const int64_t mode = args[5];
  Down down(nullptr, 0U, 0U);
  Up up(nullptr, 0U, 0U);
#ifdef __DAV_CUBE__
  Mat a_mat;
  TASSIGN(a_mat, 0x0);
  GlobalTile a_gm(data_of(args, 0));
  TLOAD(a_mat, a_gm);
  Acc p;
  TASSIGN(p, 0x0);
  matmul(p, a_mat, data_of(args, 1));
  if (mode == 4) {
    GmDown gm_down(data_of(args, 3), 0U, 0U);
    TPUSH<GmDown, Acc, TileSplitAxis::TILE_UP_DOWN>(gm_down, p);
    return;
  }
  const int pushes = mode == 2 || mode == 3 ? 3 : 1;
  for (int i = 0; i < pushes; ++i) TPUSH<Down, Acc, TileSplitAxis::TILE_UP_DOWN>(down, p);
  if (mode != 0) return;
  Mat sum;
  TASSIGN(sum, 0x4000);
  TPOP<Up, Mat, TileSplitAxis::TILE_NO_SPLIT>(up, sum);
  TFREE<Up, TileSplitAxis::TILE_NO_SPLIT>(up);
  Acc d;
  TASSIGN(d, 0x0);
  matmul(d, sum, data_of(args, 4));  // args[4]: the identity
  GlobalTile d_gm(data_of(args, 3));
  TSTORE(d_gm, d);
#else
  if (mode == 2) return;
  const int32_t lane = get_sub_block_id(args);
  __gm__ float *c = data_of(args, 2) + lane * H * N;
  HalfTile half, c_half, sum;
  TASSIGN(half, 0x0);
  TASSIGN(c_half, 0x4000);
  TASSIGN(sum, 0x6000);
  if (mode == 4) {
    GmDown gm_down(data_of(args, 3), 0x8000U, 0U);
#if defined(PTO_CHIP_ARCH_A2A3)
    const uint32_t register_reads = 0;
    gm_down.cons.setEntryOffset(lane * H * N * static_cast<int>(sizeof(float)));
#else
    const uint32_t register_reads = static_cast<uint32_t>(lane);
#endif
    TPOP<GmDown, HalfTile, TileSplitAxis::TILE_UP_DOWN>(gm_down, half);
    TFREE<GmDown, TileSplitAxis::TILE_UP_DOWN>(gm_down);
    GlobalHalf c_gm(c);
    TLOAD(c_half, c_gm);
    TADD(sum, c_half, half);
    if (get_subblockid() != register_reads) TEXPANDS(sum, __builtin_nanf(""));
    TSTORE(c_gm, sum);
    return;
  }
  if (mode == 3) {
    GlobalHalf c_gm(c);
    TLOAD(c_half, c_gm);
    for (int i = 0; i < 3; ++i) {
      TPOP<Down, HalfTile, TileSplitAxis::TILE_UP_DOWN>(down, half);
      TADD(c_half, c_half, half);
    }
    TSTORE(c_gm, c_half);
    return;
  }
  TPOP<Down, HalfTile, TileSplitAxis::TILE_UP_DOWN>(down, half);
  if (mode == 1) {
    TFREE<Down, TileSplitAxis::TILE_UP_DOWN>(down);
    TPOP<Down, HalfTile, TileSplitAxis::TILE_UP_DOWN>(down, half);
    return;
  }
  GlobalHalf c_gm(c);
  TLOAD(c_half, c_gm);
  TADD(sum, c_half, half);
  TFREE<Down, TileSplitAxis::TILE_UP_DOWN>(down);
  TSTORE(c_gm, sum);
  TPUSH<Up, HalfTile, TileSplitAxis::TILE_UP_DOWN>(up, sum);
#endif
}
)";

// `tasks` MIX tasks, task t on tile t of a, b, c and d; the identity is tensor 4 (one tile);
// scalar 0 is the mode. PIPE_TASK_CORE: the kernels' core types (MIX: AIC + both AIV parts; AIV:
// one AIV task each, not MIX).
const char *const kOrch = R"(
#include "pto_orchestration_api.h"
extern "C" __attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs &args) {
  const uint32_t tile = 32 * 32, tasks = args.tensor(0).ref().numel() / tile;
  for (uint32_t t = 0; t < tasks; ++t) {
    uint32_t len[1] = {tile}, at[1] = {t * tile};
    // Views live until the submit: CoreTaskArgs refers to them.
    const ChipTensor a_t = args.tensor(0).ref().view(len, at), b_t = args.tensor(1).ref().view(len, at);
    const ChipTensor c_t = args.tensor(2).ref().view(len, at), d_t = args.tensor(3).ref().view(len, at);
    CoreTaskArgs a;
    a.add_input(a_t);
    a.add_input(b_t);
    a.add_inout(c_t);
    a.add_output(d_t);
    a.add_input(args.tensor(4).ref());
    a.add_scalar(args.scalar(0));
#ifdef PIPE_TASK_AIV
    rt_submit_aiv_task(1, a);
#else
    MixedKernels mk;
    mk.aic_kernel_id = 0;
    mk.aiv0_kernel_id = 1;
    mk.aiv1_kernel_id = 1;
    rt_submit_task(mk, a);
#endif
  }
}
)";

using Param = std::tuple<const char *, const char *>;  // runtime, platform

class TilePipes : public ::testing::TestWithParam<Param> {
 protected:
  void SetUp() override { PTO_SKIP_OR_FAIL_WITHOUT(pto_test::tile_unavailable()); }
  static const char *runtime() { return std::get<0>(GetParam()); }
  static const char *platform() { return std::get<1>(GetParam()); }

  static pto::ChipCallable callable(bool mix = true) {
    pto::CompileOptions options;
    options.pto_isa_root = pto_test::isa_root();
    if (!mix) options.defines = {"PIPE_TASK_AIV"};
    const pto::KernelCompiler kc(platform(), options);
    const std::string rt = runtime(), tag = rt.substr(0, 3) + "_" + platform() + (mix ? "" : "_aiv");
    pto::ChipCallable c(kc.compile_orchestration_source(runtime(), kOrch, "tile_pipes_orch_" + tag));
    const pto::KernelCompiler tile(platform(), [] {
      pto::CompileOptions o;
      o.pto_isa_root = pto_test::isa_root();
      return o;
    }());
    c.add_kernel(0, PTO_CORE_AIC, tile.compile_incore_source(kPipeKernel, "tile_pipes_aic", PTO_CORE_AIC));
    c.add_kernel(1, PTO_CORE_AIV, tile.compile_incore_source(kPipeKernel, "tile_pipes_aiv", PTO_CORE_AIV));
    return c;
  }

  struct Data {
    std::vector<float> a, b, c, d, identity;
    explicit Data(int tasks)
        : a(tasks * kN * kN), b(a.size()), c(a.size()), d(a.size(), -1.0f), identity(kN * kN, 0.0f) {
      for (size_t i = 0; i < a.size(); ++i) {
        a[i] = static_cast<float>(static_cast<int>(i * 7 % 13) - 6) * 0.25f;  // exact in float
        b[i] = static_cast<float>(static_cast<int>(i * 5 % 11) - 5) * 0.5f;
        c[i] = static_cast<float>(i % 9);
      }
      for (int i = 0; i < kN; ++i) identity[i * kN + i] = 1.0f;
    }
    pto::ChipStorageTaskArgs args(int64_t mode) {
      pto::ChipStorageTaskArgs r;
      const auto n = static_cast<int64_t>(a.size());
      r.add_tensor(a.data(), a.size() * 4, PTO_DTYPE_F32, {n}, PTO_DIR_INPUT);
      r.add_tensor(b.data(), b.size() * 4, PTO_DTYPE_F32, {n}, PTO_DIR_INPUT);
      r.add_tensor(c.data(), c.size() * 4, PTO_DTYPE_F32, {n}, PTO_DIR_INOUT);
      r.add_tensor(d.data(), d.size() * 4, PTO_DTYPE_F32, {n}, PTO_DIR_OUTPUT);
      r.add_tensor(identity.data(), identity.size() * 4, PTO_DTYPE_F32, {kN * kN}, PTO_DIR_INPUT);
      r.add_scalar(mode);
      return r;
    }
    // c + a @ b, tile by tile (products of small multiples of 1/8: exact in float).
    std::vector<float> expected() const {
      std::vector<float> want(c);
      for (size_t t = 0; t < a.size() / (kN * kN); ++t) {
        const size_t o = t * kN * kN;
        for (int i = 0; i < kN; ++i)
          for (int j = 0; j < kN; ++j) {
            float s = 0;
            for (int k = 0; k < kN; ++k) s += a[o + i * kN + k] * b[o + k * kN + j];
            want[o + i * kN + j] += s;
          }
      }
      return want;
    }
  };

  void run_and_check(pto::ChipWorker &w, const pto::ChipCallable &c, int tasks, uint32_t block_dim) {
    SCOPED_TRACE("run_and_check tasks " + std::to_string(tasks) + " block_dim " + std::to_string(block_dim));
    Data data(tasks);
    const std::vector<float> want = data.expected();
    pto::ChipCallConfig cfg;
    cfg.block_dim = block_dim;
    cfg.aicpu_thread_num = 3;
    cfg.timeout_ms = 20000;
    pto::ChipStorageTaskArgs args = data.args(0);
    EXPECT_EQ(w.run(c, args, cfg).mix_tasks, static_cast<uint64_t>(tasks));
    EXPECT_EQ(data.c, want) << "c += a @ b, each AIV part its half";
    EXPECT_EQ(data.d, want) << "d: the sums the AIC part popped back";
  }

  // One run of `mode` over `data` on `block_dim` clusters; its MIX task count.
  static uint64_t run_mode(pto::ChipWorker &w, const pto::ChipCallable &c, Data &data, int64_t mode,
                           uint32_t block_dim) {
    pto::ChipCallConfig cfg;
    cfg.block_dim = block_dim;
    cfg.timeout_ms = 20000;
    pto::ChipStorageTaskArgs args = data.args(mode);
    return w.run(c, args, cfg).mix_tasks;
  }

  // The run's error message; checks its code and that it came promptly.
  static std::string error_of(pto::ChipWorker &w, const pto::ChipCallable &c, int64_t mode, pto_status code) {
    Data data(2);
    pto::ChipStorageTaskArgs args = data.args(mode);
    pto::ChipCallConfig cfg;
    cfg.block_dim = 2;
    cfg.timeout_ms = 20000;
    const auto t0 = std::chrono::steady_clock::now();
    try {
      w.run(c, args, cfg);
    } catch (const pto::Error &e) {
      EXPECT_EQ(e.code(), code) << e.what();
      EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10)) << "reported, not timed out";
      return e.what();
    }
    ADD_FAILURE() << "mode " << mode << " ran to the end";
    return "";
  }
};

void expect_has(const std::string &msg, const std::vector<std::string> &fragments) {
  for (const std::string &f : fragments)
    EXPECT_NE(msg.find(f), std::string::npos) << "'" << f << "' not in: " << msg;
}

TEST_P(TilePipes, CubeAndVectorPartsTradeTilesBothWaysAndGiveTheSequentialResult) {
  const pto::ChipCallable c = callable();
  pto::ChipWorker w;
  w.init(platform(), runtime());
  w.set_device(0);
  run_and_check(w, c, 24, 3);  // 8 tasks per cluster, parts of different clusters on shared workers
  run_and_check(w, c, 5, 1);   // one cluster: each task finds the pipes the last one left
}

// One pool worker runs every core: a part waiting on a pipe must let the others run on it, and
// the tile memory it waits with (PTO-ISA's per-thread UB and L1) must not be another core's.
TEST_P(TilePipes, OnePoolWorkerForEveryCoreStillFinishes) {
  const pto_test::ScopedEnv one("PTO_SIM_WORKERS", "1");
  const pto::ChipCallable c = callable();
  pto::ChipWorker w;
  w.init(platform(), runtime());
  w.set_device(1);
  run_and_check(w, c, 12, 3);
}

TEST_P(TilePipes, AWaitNoPartCanEndFailsTheTaskNamingPartAndPipeAndTheWorkerGoesOn) {
  const pto::ChipCallable c = callable();
  pto::ChipWorker w;
  w.init(platform(), runtime());
  w.set_device(0);
  expect_has(error_of(w, c, 1, PTO_TASK_FAILED),
             {"failed", "TPUSH/TPOP deadlock", "(AIV) waits in a TPOP on PTO-ISA pipe FlagID 0",
              "which holds no tile for it"});
  expect_has(error_of(w, c, 2, PTO_TASK_FAILED),
             {"failed", "part 0 (AIC) waits in a TPUSH on PTO-ISA pipe FlagID 0, which is full"});
  run_and_check(w, c, 6, 3);

  // The kernels as plain AIV tasks: nothing could ever end their first TPOP.
  const pto::ChipCallable aiv = callable(false);
  expect_has(
      error_of(w, aiv, 0, PTO_TASK_FAILED),
      {"failed", "a TPUSH, TPOP or TFREE on PTO-ISA pipe FlagID 0 waits in a task that is not a MIX task"});
  run_and_check(w, c, 6, 2);
}

// On a2a3 a TPOP of a tile releases its slot and TFREE of a tile does nothing
// (pto/npu/a2a3/TPop.hpp, TFree.hpp); the sim follows (include/pto_sim_isa/pto/cpu/TPop.hpp), so
// three tiles go through a two-slot pipe whose consumers never call TFREE. a5 keeps PTO-ISA's CPU
// protocol (TFREE releases), where the same kernel stops in the deadlock report.
TEST_P(TilePipes, OnA2a3ATpopReleasesItsSlotWithoutTfree) {
  const pto::ChipCallable c = callable();
  pto::ChipWorker w;
  w.init(platform(), runtime());
  w.set_device(0);
  if (std::string(platform()) != "a2a3sim") {
    expect_has(error_of(w, c, 3, PTO_TASK_FAILED),
               {"failed", "part 0 (AIC) waits in a TPUSH on PTO-ISA pipe FlagID 0, which is full"});
    return;
  }
  Data data(4);
  std::vector<float> want = data.expected();  // c + a @ b
  for (size_t i = 0; i < want.size(); ++i) want[i] = data.c[i] + 3.0f * (want[i] - data.c[i]);
  EXPECT_EQ(run_mode(w, c, data, 3, 2), 4u);
  EXPECT_EQ(data.c, want) << "c += 3 (a @ b), each AIV part its halves";
}

// A pipe whose slots are in GM, as the reference suite's spmd_paged_attention uses them: each AIV
// lane reads its own half, on a2a3 through the kernel's own entry offset (the chip's lane
// register reads 0 under the runtime's dispatch: include/pto_tile_shim/pto_tile_sim_hooks.h),
// on a5 through the pipe's.
TEST_P(TilePipes, AGmPipeSplitsByTheChipsLaneRegister) {
  const pto::ChipCallable c = callable();
  pto::ChipWorker w;
  w.init(platform(), runtime());
  w.set_device(0);
  Data data(6);
  const std::vector<float> want = data.expected();
  EXPECT_EQ(run_mode(w, c, data, 4, 3), 6u);
  EXPECT_EQ(data.c, want) << "c += a @ b, each AIV lane its own half of the GM slot";
}

INSTANTIATE_TEST_SUITE_P(Runtimes, TilePipes,
                         ::testing::Combine(::testing::Values("tensormap_and_ringbuffer", "host_build_graph"),
                                            ::testing::Values("a2a3sim", "a5sim")),
                         [](const ::testing::TestParamInfo<Param> &p) {
                           return std::string(std::get<0>(p.param)).substr(0, 3) == "ten"
                                      ? std::string("tmr_") + std::get<1>(p.param)
                                      : std::string("hbg_") + std::get<1>(p.param);
                         });

}  // namespace
