# scripts/pto_isa_root.sh — sourced, never run: exports PTO_ISA_ROOT, the PTO-ISA checkout tile
# kernels compile against, as the pinned copy beside the checkout (../shared/third_party/pto-isa)
# unless PTO_ISA_ROOT already names one (scripts/fetch_pto_isa.sh fetches it).
if [ -z "${PTO_ISA_ROOT:-}" ]; then
  pto_isa_beside="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/../shared/third_party/pto-isa"
  if [ -f "$pto_isa_beside/include/pto/pto-inst.hpp" ]; then
    PTO_ISA_ROOT="$(cd "$pto_isa_beside" && pwd)"
    export PTO_ISA_ROOT
  fi
  unset pto_isa_beside
fi
