// src/host/tensor_dump_files.h — enable_dump_tensor on the host: the dump region's layout and,
// after the run, one .npy file per dumped tensor plus an index.json (docs/guide/profiling.md).
#ifndef PTO_HOST_TENSOR_DUMP_FILES_H
#define PTO_HOST_TENSOR_DUMP_FILES_H

#include <cstdint>
#include <string>

#include "core/tensor_dump.h"
#include "host/device_runner.h"

namespace pto {

// Bytes of the dump region for this config (0 when dumping is off).
uint64_t dump_region_bytes(const pto_call_config &cfg);

// Lays out a DumpRegion at image + off for device address dev + off.
void init_dump_region(char *image, uint64_t off, uint64_t dev, const pto_call_config &cfg);

// Writes the dumped tensors of a finished run under $PTO_DUMP_DIR (default ./pto_dump)/
// device-<id>/run-<time>-<pid>-<n>/ and names that directory in stats->dump_dir. A file that
// cannot be written fails the run (PTO_INTERNAL, *error says which).
pto_status write_dump_files(DeviceRunner &runner, const RunInputs &in, const void *dev_region,
                            const char *runtime, pto_run_stats *stats, std::string *error);

}  // namespace pto
#endif  // PTO_HOST_TENSOR_DUMP_FILES_H
