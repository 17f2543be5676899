// tests/cpp/test_costmodel.cpp — PTO-ISA's cost model, through our shims, prices the example kernels.
//
// Contract under test: the example kernels (bgemm's AIC gemm and AIV add, paged attention's
// qk and softmax_prepare) compile in PTO-ISA's cost-model mode (-D__COSTMODEL
// -D__NPU_ARCH__=2201 -DPTO_COMM_NOT_SUPPORTED instead of -D__CPU_SIM) against the pinned
// PTO-ISA with include/pto_costmodel_shim/ first on the include path and the formula table
// PTO-ISA's own generator writes; pto_costmodel_probe.h prices one kernel_entry call at a
// time: the same call gives the same cycles (state is reset between calls), the kernel's flags
// reach the pipeline simulation, the price follows the work (twice the tiles, twice the
// cycles; bigger tiles, more), the model writes nothing to stderr, and a cost-model build
// computes no values (an output tensor keeps its contents).
//
// The build goes through KernelCompiler as a tile kernel would: include_dirs add the shims and
// the generated header, PTO_TILE_KERNEL_CFLAGS (last on the command line) swaps the CPU
// simulation for the cost model and force-includes the probe. Needs what the tile tests need
// (clang++-19, a pto-isa checkout) and python3 for PTO-ISA's generator; they skip saying what
// is missing, or fail under PTO_REQUIRE_TILE=1.
#include <dlfcn.h>
#include <stdlib.h>

#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "common/scoped_env.h"
#include "common/tile_toolchain.h"
#include "pto/error.h"
#include "pto/kernel_compiler.h"
#include "pto_abi/intrinsic.h"
#include "pto_abi/tensor.h"
#include "pto_costmodel_shim/pto_costmodel_probe.h"

namespace {

namespace fs = std::filesystem;
using pto_test::ScopedEnv;

using pto_test::isa_root;

// Runs PTO-ISA's two formula-table generators (a2a3 and a5: lightweight_costmodel.hpp includes
// both) with their output redirected from beside the script (their OUT_PATH) to `out_root`,
// through a temporary file and a rename: test processes run in parallel, and a compile in one
// must never read the half-written header of another.
constexpr const char *kGenerate = R"(import importlib.util, os, pathlib, sys
isa, out_root = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
for arch in ("a2a3", "a5"):
    rel = pathlib.Path("pto/costmodel") / arch / "formula_costmodel"
    script = isa / "include" / rel / "gen_formula_params_header.py"
    spec = importlib.util.spec_from_file_location("pto_gen_" + arch, script)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    out = out_root / rel / "formula_params_generated.hpp"
    out.parent.mkdir(parents=True, exist_ok=True)
    module.OUT_PATH = out.with_name(f"{out.name}.{os.getpid()}.tmp")
    module.main()
    os.replace(module.OUT_PATH, out)
)";

std::string shell_quote(const std::string &s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

struct Kernel {
  void (*entry)(int64_t *) = nullptr;
  void (*begin)() = nullptr;
  int (*end)(PtoCostmodelCycles *, size_t) = nullptr;
};

// A host buffer and a contiguous descriptor over it; float32 elements are set to `fill`.
struct Tensor {
  std::vector<unsigned char> bytes;
  ChipTensor desc;
  Tensor(std::vector<uint32_t> shape, DataType dtype, float fill = 0.5f) {
    uint64_t n = 1;
    for (uint32_t s : shape) n *= s;
    bytes.assign(n * get_element_size(dtype), 0x3c);
    if (dtype == DataType::FLOAT32) {
      for (uint64_t i = 0; i < n; ++i) memcpy(&bytes[i * 4], &fill, 4);
    }
    desc.init_external(bytes.data(), bytes.size(), shape.data(), static_cast<uint32_t>(shape.size()), dtype);
  }
};

// The examples' kernels, built once for every test of the suite.
class CostModel : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const std::string root = isa_root();
    if (root.empty()) {
      unavailable_ =
          "no pto-isa checkout (set PTO_ISA_ROOT; scripts/fetch_pto_isa.sh gets the pinned commit)";
      return;
    }
    try {
      pto::KernelCompiler("a2a3sim").tile_compiler();
    } catch (const pto::Error &e) {
      unavailable_ = std::string("no C++23 compiler for tile kernels: ") + e.what();
      return;
    }
    // A fixed directory, so that the include path (part of the kernel cache's key) is the same
    // on every run and the compiled kernels are reused.
    const std::string gen = std::string(getenv("PTO_CACHE_DIR")) + "/costmodel_formula_params";
    const std::string command = "python3 -B -c " + shell_quote(kGenerate) + " " + shell_quote(root) + " " +
                                shell_quote(gen) + " 2>&1";
    if (system(command.c_str()) != 0) {
      unavailable_ = "python3 could not run PTO-ISA's gen_formula_params_header.py (" + command + ")";
      return;
    }
    pto::CompileOptions options;
    options.pto_isa_root = root;
    options.include_dirs = {PTO_TEST_COSTMODEL_SHIM_DIR, gen};
    ScopedEnv cflags("PTO_TILE_KERNEL_CFLAGS",
                     "-U__CPU_SIM -D__COSTMODEL -D__NPU_ARCH__=2201 -DPTO_COMM_NOT_SUPPORTED "
                     "-include pto_costmodel_probe.h");
    const pto::KernelCompiler kc("a2a3sim", options);
    const std::string examples = getenv("PTO_EXAMPLES_DIR");
    const std::vector<std::tuple<std::string, std::string, pto_core_type>> sources = {
        {"gemm", "bgemm/kernels/kernel_gemm.cpp", PTO_CORE_AIC},
        {"add", "bgemm/kernels/kernel_add.cpp", PTO_CORE_AIV},
        {"qk", "paged_attention/kernels/kernel_qk.cpp", PTO_CORE_AIC},
        {"softmax_prepare", "paged_attention/kernels/kernel_softmax_prepare.cpp", PTO_CORE_AIV},
    };
    for (const auto &[name, source, core] : sources) {
      std::string so;
      try {
        so = kc.compile_incore(examples + "/" + source, core);  // one at a time: 2 CPUs, 0.2 GB each
      } catch (const pto::Error &e) {
        failure_ = name + " does not compile in cost-model mode: " + e.what();
        return;
      }
      void *handle = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (handle == nullptr) {
        failure_ = std::string("cannot load ") + so + ": " + dlerror();
        return;
      }
      Kernel &k = kernels_[name];
      k.entry = reinterpret_cast<void (*)(int64_t *)>(dlsym(handle, "kernel_entry"));
      k.begin = reinterpret_cast<void (*)()>(dlsym(handle, "pto_costmodel_begin"));
      k.end = reinterpret_cast<int (*)(PtoCostmodelCycles *, size_t)>(dlsym(handle, "pto_costmodel_end"));
      if (k.entry == nullptr || k.begin == nullptr || k.end == nullptr) {
        failure_ = so + " lacks kernel_entry or the probe's pto_costmodel_begin/end";
        return;
      }
    }
  }

  void SetUp() override {
    PTO_SKIP_OR_FAIL_WITHOUT(unavailable_);
    ASSERT_TRUE(failure_.empty()) << failure_;
  }

  // One invocation as the runtime makes it: tensors, then scalars, then the context slots.
  static PtoCostmodelCycles price(const std::string &kernel, const std::vector<Tensor *> &tensors,
                                  const std::vector<int64_t> &scalars = {}) {
    const Kernel &k = kernels_.at(kernel);
    std::vector<int64_t> args(PTO_ABI_ARGS_LEN, 0);
    size_t i = 0;
    for (Tensor *t : tensors) args[i++] = static_cast<int64_t>(reinterpret_cast<uintptr_t>(&t->desc));
    for (int64_t s : scalars) args[i++] = s;
    LocalContext local{0, 1};
    GlobalContext global{0, 0};
    args[PTO_ABI_LOCAL_CONTEXT_INDEX] = static_cast<int64_t>(reinterpret_cast<uintptr_t>(&local));
    args[PTO_ABI_GLOBAL_CONTEXT_INDEX] = static_cast<int64_t>(reinterpret_cast<uintptr_t>(&global));
    PtoCostmodelCycles cycles{};
    k.begin();
    k.entry(args.data());
    EXPECT_EQ(k.end(&cycles, sizeof cycles), 0);
    EXPECT_EQ(cycles.stuck_events, 0u) << kernel << ": a wait the simulation could not satisfy";
    return cycles;
  }

  // bgemm's tasks: `tiles` square float32 tiles of edge `edge` per operand.
  static PtoCostmodelCycles gemm(uint32_t tiles, uint32_t edge) {
    Tensor a({tiles, edge, edge}, DataType::FLOAT32), b({tiles, edge, edge}, DataType::FLOAT32),
        p({tiles, edge, edge}, DataType::FLOAT32);
    return price("gemm", {&a, &b, &p});
  }
  static PtoCostmodelCycles add(uint32_t tiles, uint32_t edge) {
    Tensor c({tiles, edge, edge}, DataType::FLOAT32), p({tiles, edge, edge}, DataType::FLOAT32);
    return price("add", {&c, &p});
  }

  static std::string unavailable_;  // a missing tool: skip (or fail under PTO_REQUIRE_TILE=1)
  static std::string failure_;      // the shims or the probe are broken: fail
  static std::map<std::string, Kernel> kernels_;
};

std::string CostModel::unavailable_;
std::string CostModel::failure_;
std::map<std::string, Kernel> CostModel::kernels_;

bool same_cycles(const PtoCostmodelCycles &a, const PtoCostmodelCycles &b) {
  return memcmp(&a, &b, sizeof a) == 0;
}

TEST_F(CostModel, PricesAGemmTaskOnTheCubePipesAndRepeatsThePriceExactly) {
  const PtoCostmodelCycles first = gemm(4, 128);  // bgemm --case0's AIC task
  const PtoCostmodelCycles second = gemm(4, 128);
  EXPECT_TRUE(same_cycles(first, second)) << first.total_cycles << " then " << second.total_cycles;
  EXPECT_GT(first.total_cycles, 0u);
  for (int pipe :
       {PTO_COSTMODEL_PIPE_MTE2, PTO_COSTMODEL_PIPE_MTE1, PTO_COSTMODEL_PIPE_CUBE, PTO_COSTMODEL_PIPE_FIXP}) {
    EXPECT_GT(first.pipe_busy_cycles[pipe], 0u) << "pipe " << pipe;
  }
  EXPECT_EQ(first.pipe_busy_cycles[PTO_COSTMODEL_PIPE_VEC], 0u);
  // No pipe is busy longer than the whole invocation; the model's clock is a2a3's 1.85 GHz.
  for (uint64_t busy : first.pipe_busy_cycles) EXPECT_LE(busy, first.total_cycles);
  EXPECT_DOUBLE_EQ(first.cycles_per_us, 1850.0);
}

TEST_F(CostModel, AnAddTaskUsesTheVectorPipesOnly) {
  const PtoCostmodelCycles c = add(4, 64);
  EXPECT_TRUE(same_cycles(c, add(4, 64)));
  EXPECT_GT(c.pipe_busy_cycles[PTO_COSTMODEL_PIPE_MTE2], 0u);
  EXPECT_GT(c.pipe_busy_cycles[PTO_COSTMODEL_PIPE_VEC], 0u);
  EXPECT_GT(c.pipe_busy_cycles[PTO_COSTMODEL_PIPE_MTE3], 0u);
  EXPECT_EQ(c.pipe_busy_cycles[PTO_COSTMODEL_PIPE_CUBE], 0u);
}

TEST_F(CostModel, TheKernelsFlagsReachThePipelineSimulation) {
  // 4 tiles x (MTE2->MTE1, MTE1->M, M->FIX, FIX->MTE2 and one M->MTE1 between K chunks) plus
  // pipe_sync, each a set_flag and a wait_flag: without the qualifiers shim, none is seen.
  EXPECT_GE(gemm(4, 128).sync_events, 4u * 2u * 5u);
}

TEST_F(CostModel, TwiceTheTilesTakeTwiceTheCycles) {
  // The kernels wait for each tile's store before the next tile's load, so tiles do not overlap.
  for (uint32_t edge : {64u, 128u}) {
    const double gemm_ratio = static_cast<double>(gemm(8, edge).total_cycles) / gemm(4, edge).total_cycles;
    const double add_ratio = static_cast<double>(add(8, edge).total_cycles) / add(4, edge).total_cycles;
    EXPECT_NEAR(gemm_ratio, 2.0, 0.05) << "edge " << edge;
    EXPECT_NEAR(add_ratio, 2.0, 0.05) << "edge " << edge;
  }
}

TEST_F(CostModel, TilesOfTwiceTheEdgeTakeLonger) {
  // 8x the multiply-adds and 4x the bytes of a 64-edge gemm; 4x the bytes of an add.
  EXPECT_GT(gemm(4, 128).total_cycles, 4 * gemm(4, 64).total_cycles);
  EXPECT_GT(add(4, 128).total_cycles, 3 * add(4, 64).total_cycles);
}

TEST_F(CostModel, PagedAttentionPricesFollowTheirShapesAndScalars) {
  constexpr uint32_t M = 16, D = 128, N = 128;  // examples/paged_attention --case mid
  Tensor q({M, D}, DataType::BFLOAT16), k({N, D}, DataType::BFLOAT16), s({M, N}, DataType::FLOAT32);
  const PtoCostmodelCycles qk = price("qk", {&q, &k, &s});
  EXPECT_GT(qk.pipe_busy_cycles[PTO_COSTMODEL_PIPE_CUBE], 0u);

  Tensor p({M, N}, DataType::BFLOAT16), m({M}, DataType::FLOAT32), l({M}, DataType::FLOAT32);
  const float scale = 0.088f;
  uint32_t scale_bits;
  memcpy(&scale_bits, &scale, sizeof scale_bits);
  const PtoCostmodelCycles full = price("softmax_prepare", {&s, &p, &m, &l}, {scale_bits, N});
  const PtoCostmodelCycles half = price("softmax_prepare", {&s, &p, &m, &l}, {scale_bits, N / 2});
  // `valid` keys are loaded (TLOAD of a dynamic-width tile), the rest padded (TFILLPAD).
  EXPECT_LT(half.pipe_busy_cycles[PTO_COSTMODEL_PIPE_MTE2], full.pipe_busy_cycles[PTO_COSTMODEL_PIPE_MTE2]);
  EXPECT_GT(full.pipe_busy_cycles[PTO_COSTMODEL_PIPE_VEC], 0u);
}

TEST_F(CostModel, WritesNothingToStderr) {
  // The formula backend is asked about every instruction and has no entry for most shapes.
  testing::internal::CaptureStderr();
  gemm(4, 64);
  add(4, 128);
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
}

TEST_F(CostModel, ACostModelBuildComputesNoValues) {
  // What the runtime must know: pricing a task does not run it; a second build must.
  Tensor a({4, 64, 64}, DataType::FLOAT32, 1.0f), b({4, 64, 64}, DataType::FLOAT32, 2.0f),
      p({4, 64, 64}, DataType::FLOAT32, -7.0f);
  const std::vector<unsigned char> before = p.bytes;
  price("gemm", {&a, &b, &p});
  EXPECT_EQ(p.bytes, before);
}

}  // namespace
