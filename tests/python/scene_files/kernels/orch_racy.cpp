// tests/python/scene_files/kernels/orch_racy.cpp — orch.cpp with the planted bug: the bump
// declares x as an input, so y = 2x or 2(x + 1) depending on which task runs first.
#define PTO_BUMP_ACCESS in
#include "orch.cpp"
