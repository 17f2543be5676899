/* include/pto_abi/data_type.h — element types of the descriptor ABI (kernel_entry kernels).
 *
 * The descriptor ABI is the one the reference implementation's kernels are written against
 * (hw-native-sys/simpler): a kernel `extern "C" void kernel_entry(__gm__ int64_t *args)` whose
 * tensor arguments arrive as pointers to ChipTensor descriptors (tensor.h). The enumerator
 * values below are that ABI's: a kernel may switch on `desc->dtype`, so they never change.
 * Written for this project from the documented layout; compiles as C++17 (g++, the runtime and
 * orchestrations) and C++23 (clang, PTO-ISA tile kernels). */
#ifndef PTO_ABI_DATA_TYPE_H
#define PTO_ABI_DATA_TYPE_H

#include <stdint.h>
#include <string.h>

#include <type_traits>

/* Dimensions a descriptor can describe. */
constexpr int MAX_TENSOR_DIMS = 5;

/* Where a descriptor's buffer lives; the sim has one address space, so always HOST here. */
enum class AddressSpace : uint8_t { HOST = 0, DEVICE = 1 };

enum class DataType : uint8_t {
  FLOAT32 = 0,
  FLOAT16 = 1,
  INT32 = 2,
  INT16 = 3,
  INT8 = 4,
  UINT8 = 5,
  BFLOAT16 = 6,
  INT64 = 7,
  UINT64 = 8,
  UINT16 = 9,
  UINT32 = 10,
  BOOL = 11,
  FP8E4M3FN = 12, /* a5 formats: no NumPy dtype carries them, so no run tensor can have them */
  FP8E8M0 = 13,
  FP4E2M1 = 14,
  DATA_TYPE_NUM = 15,
};
static_assert(sizeof(DataType) == 1, "a descriptor stores the dtype in one byte");

/* Bytes per element (0 for a value outside the enum). FP4E2M1 packs two values per byte. */
inline uint64_t get_element_size(DataType dtype) {
  switch (dtype) {
    case DataType::INT64:
    case DataType::UINT64:
      return 8;
    case DataType::FLOAT32:
    case DataType::INT32:
    case DataType::UINT32:
      return 4;
    case DataType::FLOAT16:
    case DataType::BFLOAT16:
    case DataType::INT16:
    case DataType::UINT16:
      return 2;
    case DataType::INT8:
    case DataType::UINT8:
    case DataType::BOOL:
    case DataType::FP8E4M3FN:
    case DataType::FP8E8M0:
    case DataType::FP4E2M1:
      return 1;
    default:
      return 0;
  }
}

inline const char *get_dtype_name(DataType dtype) {
  static const char *const kNames[] = {"FLOAT32", "FLOAT16",  "INT32",     "INT16",   "INT8",
                                       "UINT8",   "BFLOAT16", "INT64",     "UINT64",  "UINT16",
                                       "UINT32",  "BOOL",     "FP8E4M3FN", "FP8E8M0", "FP4E2M1"};
  const unsigned i = static_cast<unsigned>(dtype);
  return i < sizeof kNames / sizeof kNames[0] ? kNames[i] : "UNKNOWN";
}

/* What CoreTaskArgs::add_scalar accepts: arithmetic values and enums, stored as 64 bits. */
template <typename T>
inline constexpr bool is_supported_scalar_arg_v =
    std::is_arithmetic_v<std::remove_cv_t<std::remove_reference_t<T>>> ||
    std::is_enum_v<std::remove_cv_t<std::remove_reference_t<T>>>;

/* A scalar's 64-bit slot: the value's bytes, zero-extended (a float keeps its float32 bits,
 * an int32 its 32-bit pattern), which is how the kernel reads it back. */
template <typename T>
inline uint64_t to_u64(T value) {
  static_assert(std::is_trivially_copyable_v<T>, "to_u64: trivially copyable values only");
  static_assert(sizeof(T) <= 8, "to_u64: at most 64 bits");
  uint64_t bits = 0;
  memcpy(&bits, &value, sizeof(T));
  return bits;
}

template <typename T>
inline T from_u64(uint64_t bits) {
  static_assert(std::is_trivially_copyable_v<T>, "from_u64: trivially copyable values only");
  static_assert(sizeof(T) <= 8, "from_u64: at most 64 bits");
  T value;
  memcpy(&value, &bits, sizeof(T));
  return value;
}

#endif /* PTO_ABI_DATA_TYPE_H */
