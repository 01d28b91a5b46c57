// The variant registry: every compiled variant, registered explicitly (no static
// initialisers: the list is built on first use), and the full config space of both families.
//
// Pruned builds (kernels/variant_selection.cmake): GDN_KEPT_VARIANTS is a comma-separated
// list of names ("" keeps every variant listed here); a kept build registers those names plus
// every backward variant and every staged forward variant (the default rule's universal
// fallback). GDN_COMPILE_FUSED = 0 when no kept name is fused: the fused TUs are not built.
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include "gdn/variant.hpp"
#include "backward/bwd_variant.hpp"
#include "forward/variant.hpp"
#include "staged/variant.hpp"

#ifndef GDN_KEPT_VARIANTS
#define GDN_KEPT_VARIANTS ""
#endif
#ifndef GDN_COMPILE_FUSED
#define GDN_COMPILE_FUSED 1
#endif
// 1 (GDN_VARIANTS=all): register every fused config of the full space this build implements,
// not just the default list.
#ifndef GDN_REGISTER_FULL_SPACE
#define GDN_REGISTER_FULL_SPACE 0
#endif

namespace gdn {
namespace {

// True when `name` is one of the comma-separated names of `list`.
constexpr bool listed(std::string_view list, std::string_view name) {
  while (!list.empty()) {
    const size_t comma = list.find(',');
    if (list.substr(0, comma) == name) return true;
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return false;
}

bool kept_in_this_build(const Variant& v) {
  constexpr std::string_view kept = GDN_KEPT_VARIANTS;
  if (kept.empty()) return true;
  if (v.pass() == Pass::Backward || v.config().family == Family::Staged) return true;
  return listed(kept, v.name());
}

struct Registry {
  std::vector<std::unique_ptr<Variant>> owned;
  std::vector<const Variant*> view;
};

const Registry& build_registry() {
  static const Registry reg = [] {
    Registry r;
    auto keep = [&r](std::unique_ptr<Variant> v) {
      if (!kept_in_this_build(*v)) return;
      r.owned.push_back(std::move(v));
      r.view.push_back(r.owned.back().get());
    };
    for (int bv : staged::kForwardBlockV)
      keep(staged::make_staged_variant(
          KernelConfig{.pass = Pass::Forward, .family = Family::Staged, .block_v = bv}));
    for (int bv : staged::kBackwardBlockV)
      keep(staged::make_staged_variant(
          KernelConfig{.pass = Pass::Backward, .family = Family::Staged, .block_v = bv}));
#if GDN_COMPILE_FUSED
    if (GDN_REGISTER_FULL_SPACE) {
      for (const KernelConfig& c : full_config_space())
        if (c.family == Family::Fused && fused::fused_config_built(c).ok)
          keep(fused::make_fused_variant(c));
    } else {
      for (const KernelConfig& c : fused::kDefaultFusedConfigs) keep(fused::make_fused_variant(c));
    }
    for (const KernelConfig& c : bwd::kBackwardConfigs) keep(bwd::make_backward_variant(c));
#endif
    return r;
  }();
  return reg;
}

// Values of each KernelConfig field the generator enumerates (variant_config.hpp's ranges).
// The backward space: the staged family's V-blocks and the chunked (fused) family's V-blocks,
// CP segments and roles (cooperative mma.sync chain, column-warp wgmma chain, or the
// producer-consumer fused kernel; 2 stages).
constexpr Family kFamilies[] = {Family::Staged, Family::Fused};
constexpr int kBlockV[] = {32, 64, 128};
constexpr int kStages[] = {2, 3};
constexpr WarpRoles kRoles[] = {WarpRoles::Cooperative, WarpRoles::ProducerConsumer,
                                 WarpRoles::ColumnWarps};
constexpr int kCpSegmentChunks[] = {0, 4, 8, 16, 32, 64, 128, 256};

std::vector<KernelConfig> enumerate_space() {
  std::vector<KernelConfig> space;
  for (Family f : kFamilies)
    for (int bv : kBlockV)
      for (int st : kStages)
        for (WarpRoles ro : kRoles)
          for (int cp : kCpSegmentChunks)
            space.push_back(KernelConfig{.pass = Pass::Forward,
                                         .family = f,
                                         .block_v = bv,
                                         .stages = st,
                                         .roles = ro,
                                         .cp_segment_chunks = cp});
  for (int bv : kBlockV)
    space.push_back(KernelConfig{.pass = Pass::Backward, .family = Family::Staged, .block_v = bv});
  for (WarpRoles ro : {WarpRoles::Cooperative, WarpRoles::ColumnWarps, WarpRoles::ProducerConsumer})
    for (int bv : {16, 32, 64, 128})
      for (int cp : kCpSegmentChunks)
        space.push_back(KernelConfig{.pass = Pass::Backward,
                                     .family = Family::Fused,
                                     .block_v = bv,
                                     .stages = 2,
                                     .roles = ro,
                                     .cp_segment_chunks = cp});
  return space;
}

}  // namespace

std::span<const Variant* const> registry() {
  const Registry& r = build_registry();
  return {r.view.data(), r.view.size()};
}

const Variant* find_variant(std::string_view name) {
  for (const Variant* v : registry())
    if (v->name() == name) return v;
  return nullptr;
}

std::span<const KernelConfig> full_config_space() {
  static const std::vector<KernelConfig> space = enumerate_space();
  return {space.data(), space.size()};
}

}  // namespace gdn
