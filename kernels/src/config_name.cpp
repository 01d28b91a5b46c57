// gdn::config_name: the deterministic procedural name of a config.
//   staged: gdn_fwd_sm90_staged_v64_cp0
//   fused:  gdn_fwd_sm90_fused_v64_s2_pc_r232_cp16_x2
// Warp roles: coop (cooperative), pc (producer/consumer), cw (column warps).
// The register split appears only when set (r0 = compiler default) and chains only when not 1,
// keeping common names short; every field that distinguishes two configs appears, so two
// different configs never share a name, invalid ones included (`gdnlab space` lists those).
#include <sstream>
#include <string>

#include "gdn/variant.hpp"
#include "gdn/variant_config.hpp"

namespace gdn {

namespace {
std::string roles_token(WarpRoles r) {
  switch (r) {
    case WarpRoles::Cooperative: return "coop";
    case WarpRoles::ProducerConsumer: return "pc";
    case WarpRoles::ColumnWarps: return "cw";
  }
  return "roles" + std::to_string(static_cast<int>(r));  // not a WarpRoles value: still distinct
}
}  // namespace

std::string config_name(const KernelConfig& c) {
  const bool fused = c.family == Family::Fused;
  // The staged family has no ring or roles; they are named only when an (invalid) staged
  // config sets them, so that the name still tells it apart.
  const bool show_ring = fused || c.stages != 2;
  const bool show_roles = fused || c.roles != WarpRoles::Cooperative;
  std::ostringstream name;
  name << "gdn_fwd_sm90_" << (fused ? "fused" : "staged") << "_v" << c.block_v;
  if (show_ring) name << "_s" << c.stages;
  if (show_roles) name << '_' << roles_token(c.roles);
  if (c.consumer_regs != 0) name << "_r" << c.consumer_regs;
  name << "_cp" << c.cp_segment_chunks;
  if (c.chains_per_cta != 1) name << "_x" << c.chains_per_cta;
  return name.str();
}

std::string variant_name(Pass pass, const KernelConfig& c) {
  std::string name = config_name(c);
  const std::string fwd = "gdn_fwd_";
  if (pass == Pass::Backward && name.rfind(fwd, 0) == 0) name.replace(0, fwd.size(), "gdn_bwd_");
  return name;
}

}  // namespace gdn
