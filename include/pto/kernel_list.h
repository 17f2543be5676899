/* include/pto/kernel_list.h — one X-macro kernel list -> kernel-id enum, AICore dispatch switch, profiling names.
 *
 * For a program that links several kernels into one binary (seed 004, "thin glue"). Write the
 * list once, in a header both the kernel program and the orchestration include:
 *
 *   #define KERNEL_LIST(X)      \
 *     X(add, PTO_CORE_AIV)      \
 *     X(scale, PTO_CORE_AIV)
 *   PTO_KERNEL_IDS(KERNEL_LIST)   // enum class KernelId {add, scale}; kNumKernels; kKernelNames[];
 *                                 // kKernelCoreTypes[]; pto_kernel_core_type(KernelId)
 *
 * The kernel program defines each kernel as `void add(__gm__ int64_t *args)` and then writes
 * PTO_KERNEL_PROGRAM(KERNEL_LIST) once: it generates the dispatch switch
 * (pto_kernel_dispatch(KernelId, args)), one entry per kernel that calls the switch with its id,
 * and the exported table `pto_kernel_table` (name, core type, entry per id). Compile it with
 * KernelCompiler.compile_incore and add every kernel at once with ChipCallable.add_kernels(path):
 * func_id i is KernelId i. The loader takes the entry of func_id from the table, and traces
 * and crash reports name tasks by kKernelNames — all from the one list.
 *
 * In a program's kernels pto::num_args, pto::fail and pto::tensor work as in a PTO_KERNEL.
 * A program cannot declare PTO_KERNEL_SIGNATURE (one per binary); its tasks are not checked
 * against signatures. */
#ifndef PTO_KERNEL_LIST_H
#define PTO_KERNEL_LIST_H

#include "pto/kernel.h"

#define PTO_KERNEL_TABLE_SYMBOL "pto_kernel_table"

#ifdef __cplusplus
extern "C" {
#endif

/* One kernel of a program binary; index = func_id. */
typedef struct pto_kernel_table_entry {
  const char *name;   /* for traces and crash reports */
  uint32_t core_type; /* pto_core_type */
  void (*entry)(__gm__ int64_t *args);
} pto_kernel_table_entry;

typedef struct pto_kernel_table_t {
  uint32_t num_kernels;
  const pto_kernel_table_entry *kernels;
} pto_kernel_table_t;

#ifdef __cplusplus
} /* extern "C" */

#define PTO_KL_ENUM_(name, core) name,
#define PTO_KL_NAME_(name, core) #name,
#define PTO_KL_CORE_(name, core) core,
#define PTO_KL_CASE_(name, core) \
  case KernelId::name:           \
    name(args);                  \
    return true;
#define PTO_KL_ENTRY_(name, core) {#name, static_cast<uint32_t>(core), &pto_kernel_entry_of<KernelId::name>},

/* The id enum and the tables: usable by the orchestration, the host and the kernel program. */
#define PTO_KERNEL_IDS(LIST)                                                          \
  enum class KernelId : uint32_t { LIST(PTO_KL_ENUM_) };                             \
  constexpr const char *kKernelNames[] = {LIST(PTO_KL_NAME_)};                       \
  constexpr pto_core_type kKernelCoreTypes[] = {LIST(PTO_KL_CORE_)};                 \
  constexpr uint32_t kNumKernels = sizeof kKernelNames / sizeof kKernelNames[0];     \
  constexpr pto_core_type pto_kernel_core_type(KernelId id) {                        \
    return kKernelCoreTypes[static_cast<uint32_t>(id)];                              \
  }                                                                                  \
  constexpr const char *pto_kernel_name(KernelId id) {                               \
    return kKernelNames[static_cast<uint32_t>(id)];                                  \
  }

/* The kernel program's glue, after its kernels are defined: the dispatch switch (false for an
 * id outside the list), one entry per id, and the exported table. */
#define PTO_KERNEL_PROGRAM(LIST)                                                                   \
  inline bool pto_kernel_dispatch(KernelId id, __gm__ int64_t *args) {                             \
    switch (id) { LIST(PTO_KL_CASE_) }                                                             \
    return false;                                                                                  \
  }                                                                                                \
  template <KernelId Id>                                                                           \
  void pto_kernel_entry_of(__gm__ int64_t *args) {                                                 \
    pto_kernel_dispatch(Id, args);                                                                 \
  }                                                                                                \
  static const pto_kernel_table_entry pto_kernel_table_entries_[] = {LIST(PTO_KL_ENTRY_)};         \
  extern "C" PTO_EXPORT const pto_kernel_table_t pto_kernel_table = {                              \
      static_cast<uint32_t>(sizeof pto_kernel_table_entries_ / sizeof pto_kernel_table_entries_[0]), \
      pto_kernel_table_entries_}

#endif /* __cplusplus */
#endif /* PTO_KERNEL_LIST_H */
