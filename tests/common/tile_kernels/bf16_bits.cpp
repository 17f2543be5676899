// tests/common/tile_kernels/bf16_bits.cpp — writes the raw bits of PTO-ISA bfloat16_t values.
//
// args: out (uint16[3]), value (float scalar). Expected: 0x3f80, 0x4049 and value's bfloat16
// (-2.5 -> 0xc020). A bfloat16_t that is really IEEE half (the trap tile_toolchain.h describes)
// gives 0x3c00, 0x4248, 0xc100; a kernel missing clang's conversion routine fails to load.
#include <cstdint>
#include <cstring>
#include <pto/pto-inst.hpp>

#include "pto/kernel.h"

PTO_KERNEL(args) {
  uint16_t *out = pto::tensor<uint16_t>(args, 0);
  const bfloat16_t bits[3] = {bfloat16_t(1.0f), bfloat16_t(3.140625f), bfloat16_t(pto::scalar_f32(args, 1))};
  static_assert(sizeof bits == 3 * sizeof(uint16_t), "bfloat16_t is 16 bits");
  std::memcpy(out, bits, sizeof bits);
}
