// tests/cpp/test_comm_domain.cpp — communication domains at L3 from C++ (include/pto/comm_domain.h),
// in both chip modes, under every sanitizer preset.
//
// Contract under test: the ranks of a domain read and write each other's windows (the mesh
// all-reduce of examples/allreduce gives every chip the sum, twice in one domain); a TWAIT
// nobody satisfies fails the run at the chip's time limit naming the signal, and the worker runs
// the next run; buffers that do not fit the window are refused before anything is allocated.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/expect_error.h"
#include "common/tile_toolchain.h"
#include "hierarchical/run_state.h"
#include "l3_util.h"
#include "pto/comm_domain.h"
#include "pto/kernel_compiler.h"

namespace {

using pto::ChipMode;

std::string examples_dir() {
  const char *env = getenv("PTO_EXAMPLES_DIR");
  return std::string(env ? env : "examples");
}

pto::CompileOptions tile_options() {
  pto::CompileOptions o;
  o.pto_isa_root = pto_test::isa_root();
  return o;
}

const pto::ChipCallable &mesh_allreduce() {
  static const pto::ChipCallable c = [] {
    const std::string dir = examples_dir() + "/allreduce";
    const pto::KernelCompiler kc("a2a3sim", tile_options());
    pto::ChipCallable callable(kc.compile_orchestration("host_build_graph", dir + "/orchestration.cpp"));
    callable.add_kernel(0, PTO_CORE_AIV,
                        kc.compile_incore(dir + "/kernels/allreduce_mesh.cpp", PTO_CORE_AIV));
    return callable;
  }();
  return c;
}

// Waits for flags[0] >= 1, which nobody sets (tensor 0: the flags; scalar: the CommContext).
const char *const kWaitForeverKernel = R"(
#include <cstdint>
#include <pto/pto-inst.hpp>
#include "pto/comm/pto_comm_inst.hpp"
#include "pto/kernel.h"
PTO_KERNEL(args) {
  pto::comm::Signal s(pto::tensor<int32_t>(args, 0));
  pto::comm::TWAIT(s, 1, pto::comm::WaitCmp::GE);
}
)";

class CommDomain : public ::testing::TestWithParam<ChipMode> {
 protected:
  void SetUp() override { PTO_SKIP_OR_FAIL_WITHOUT(pto_test::tile_unavailable()); }
};

TEST_P(CommDomain, EveryRankSumsEveryWindowTwiceInOneDomain) {
  const int chips = 4;
  const int64_t n = 256;
  pto::Worker w(l3_test::options(GetParam(), chips, 0));
  std::vector<float *> in, out[2];
  for (int r = 0; r < chips; ++r) {
    in.push_back(static_cast<float *>(w.alloc(n * sizeof(float))));
    for (int64_t i = 0; i < n; ++i) in[r][i] = static_cast<float>(i + 1000 * r);
    for (auto &o : out) o.push_back(static_cast<float *>(w.alloc(n * sizeof(float))));
  }
  pto::ChipCallConfig cfg;
  cfg.block_dim = 1;
  cfg.aicpu_thread_num = 1;
  w.run(
      [&](pto::HostOrchestrator &o) {
        pto::CommDomain d = o.allocate_domain(
            "mesh", {0, 1, 2, 3}, n * 4 + 2 * chips * 4,
            {{"data", PTO_DTYPE_F32, static_cast<uint64_t>(n), n * 4}, {"flags", PTO_DTYPE_I32, 8, 32}});
        for (int epoch = 1; epoch <= 2; ++epoch) {
          std::vector<pto::ChipStorageTaskArgs> parts(chips);
          for (int r = 0; r < chips; ++r) {
            const pto::ChipDomainContext &c = d[r];
            ASSERT_EQ(c.domain_rank, r);
            pto::ChipStorageTaskArgs &a = parts[static_cast<size_t>(r)];
            a.add_tensor(in[r], n * 4, PTO_DTYPE_F32, {n}, PTO_DIR_INPUT);
            a.add_tensor(out[epoch - 1][r], n * 4, PTO_DTYPE_F32, {n}, PTO_DIR_OUTPUT);
            c.buffer("data").add_to(a, PTO_DIR_INOUT);
            c.buffer("flags").add_to(a, PTO_DIR_INOUT);
            a.add_scalar(n);
            a.add_scalar(static_cast<int64_t>(c.device_ctx));
            a.add_scalar(epoch);
          }
          o.submit_chip_group(mesh_allreduce(), parts, cfg, {0, 1, 2, 3}, "allreduce");
        }
        d.release();
        EXPECT_TRUE(d.released());
      },
      120000);
  for (const auto &o : out) {
    for (int r = 0; r < chips; ++r) {
      for (int64_t i = 0; i < n; ++i) {
        ASSERT_EQ(o[r][i], static_cast<float>(4 * i + 6000)) << "rank " << r << " element " << i;
      }
    }
  }
}

TEST_P(CommDomain, ATwaitNobodySatisfiesFailsAtTheTimeLimitNamingTheSignal) {
  const pto::KernelCompiler kc("a2a3sim", tile_options());
  pto::ChipCallable waits(
      kc.compile_orchestration_source("host_build_graph", l3_test::kOneTaskOrch, "comm_one_task"));
  waits.add_kernel(0, PTO_CORE_AIV,
                   kc.compile_incore_source(kWaitForeverKernel, "comm_wait_forever", PTO_CORE_AIV));
  pto::Worker w(l3_test::options(GetParam(), 2, 0));
  pto::ChipCallConfig cfg;
  cfg.block_dim = 1;
  cfg.timeout_ms = 1000;
  pto_test::expect_error(
      [&] {
        w.run(
            [&](pto::HostOrchestrator &o) {
              pto::CommDomain d = o.allocate_domain("d", {0, 1}, 64, {{"flags", PTO_DTYPE_I32, 16, 64}});
              std::vector<pto::ChipStorageTaskArgs> parts(2);
              for (int r = 0; r < 2; ++r)
                d[r].buffer("flags").add_to(parts[static_cast<size_t>(r)], PTO_DIR_INOUT);
              o.submit_chip_group(waits, parts, cfg, {0, 1}, "waits");
            },
            60000);
      },
      PTO_RUN_TIMEOUT, {"time limit of 1000 ms", "TWAIT on the signal at 0x", "for >= 1"});
  // The kernels returned: the same chips run the next run.
  const pto::ChipCallable add = l3_test::callable(l3_test::kAddI64Kernel, "l3_add_i64");
  auto *a = static_cast<int64_t *>(w.alloc(8 * 8));
  auto *b = static_cast<int64_t *>(w.alloc(8 * 8));
  for (int i = 0; i < 8; ++i) a[i] = i;
  w.run(
      [&](pto::HostOrchestrator &o) {
        o.submit_chip(add, l3_test::io_args(a, b, 8, {8, 1}), {}, 1);
      },
      60000);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(b[i], i + 1);
}

TEST_P(CommDomain, BuffersThatDoNotFitAreRefusedBeforeAnythingIsAllocated) {
  pto::Worker w(l3_test::options(GetParam(), 2, 0));
  w.run(
      [&](pto::HostOrchestrator &o) {
        const uint64_t before = w.heap_bytes_in_use();
        pto_test::expect_error(
            [&] {
              o.allocate_domain("d", {0, 1}, 100,
                                {{"a", PTO_DTYPE_F32, 20, 80}, {"b", PTO_DTYPE_F32, 8, 32}});
            },
            PTO_INVALID_ARGUMENT, {"the buffers need 112 bytes; window_size = 100 is too small"});
        EXPECT_EQ(w.heap_bytes_in_use(), before);
      },
      60000);
}

TEST(CommDomainNames, AFailureMessageNamesTheBufferEachOfItsAddressesIsIn) {
  const std::vector<pto::l3::NamedRange> ranges = {
      {0x1000, 0x1040, "domain 'd', rank 1 (chip 2), buffer 'flags'"},
      {0x1000, 0x2000, "domain 'd', rank 1 (chip 2)'s window"},
  };
  // Each address once, the first range holding it names it; others are left alone.
  EXPECT_EQ(pto::l3::name_addresses("wait at 0x1008 and 0x1008, store at 0x10A0, at 0x9000\n", ranges),
            "wait at 0x1008 and 0x1008, store at 0x10A0, at 0x9000"
            "\n0x1008 is domain 'd', rank 1 (chip 2), buffer 'flags' + 8"
            "\n0x10A0 is domain 'd', rank 1 (chip 2)'s window + 160");
  EXPECT_EQ(pto::l3::name_addresses("no address, 0x, 0xZ\n", ranges), "no address, 0x, 0xZ\n");
  EXPECT_EQ(pto::l3::name_addresses("0x1008", {}), "0x1008");
}

INSTANTIATE_TEST_SUITE_P(Modes, CommDomain, ::testing::Values(ChipMode::kThread, ChipMode::kProcess),
                         [](const ::testing::TestParamInfo<ChipMode> &i) {
                           return std::string(l3_test::mode_name(i.param));
                         });

}  // namespace
