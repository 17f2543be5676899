// src/core/bit_walk.h — visiting the set bits of a multi-word mask from a given bit on, wrapping.
#ifndef PTO_CORE_BIT_WALK_H
#define PTO_CORE_BIT_WALK_H

#include <cstdint>

namespace pto {

// Calls fn(i) for each bit i set in the mask whose word w is word(w), w in [0, Words), in index
// order from bit `from` on, wrapping around to bit 0, until fn returns false.
template <uint32_t Words, typename Word, typename Fn>
void for_bits_from(Word &&word, uint32_t from, Fn &&fn) {
  for (uint32_t pass = 0; pass < 2; ++pass) {
    for (uint32_t w = 0; w < Words; ++w) {
      uint64_t bits = word(w);
      const uint32_t base = w * 64;
      if (pass == 0) {  // bits >= from
        if (base + 64 <= from) continue;
        if (from > base) bits &= ~uint64_t{0} << (from - base);
      } else {  // bits < from
        if (base >= from) break;
        if (from < base + 64) bits &= (uint64_t{1} << (from - base)) - 1;
      }
      for (; bits != 0; bits &= bits - 1) {
        if (!fn(base + static_cast<uint32_t>(__builtin_ctzll(bits)))) return;
      }
    }
  }
}

}  // namespace pto
#endif  // PTO_CORE_BIT_WALK_H
