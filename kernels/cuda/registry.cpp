// The variant registry: every compiled variant, registered explicitly (no static
// initialisers: the list is built on first use), and the full config space of both families.
#include <memory>
#include <vector>

#include "gdn/variant.hpp"
#include "fused_variant.hpp"
#include "staged_variant.hpp"

namespace gdn {
namespace {

struct Registry {
  std::vector<std::unique_ptr<Variant>> owned;
  std::vector<const Variant*> view;
};

const Registry& build_registry() {
  static const Registry reg = [] {
    Registry r;
    auto add = [&r](Pass pass, const KernelConfig& c) {
      r.owned.push_back(staged::make_staged_variant(pass, c));
      r.view.push_back(r.owned.back().get());
    };
    for (int bv : staged::kForwardBlockV)
      add(Pass::Forward, KernelConfig{.family = Family::Staged, .block_v = bv});
    for (int bv : staged::kBackwardBlockV)
      add(Pass::Backward, KernelConfig{.family = Family::Staged, .block_v = bv});
    for (const KernelConfig& c : fused::kDefaultFusedConfigs) {
      r.owned.push_back(fused::make_fused_variant(c));
      r.view.push_back(r.owned.back().get());
    }
    return r;
  }();
  return reg;
}

// Values of each KernelConfig field the generator enumerates (variant_config.hpp's ranges;
// consumer_regs takes the splits worth trying for 1 producer + 2 math warpgroups).
constexpr Family kFamilies[] = {Family::Staged, Family::Fused};
constexpr int kBlockV[] = {32, 64, 128};
constexpr int kStages[] = {2, 3};
constexpr WarpRoles kRoles[] = {WarpRoles::Cooperative, WarpRoles::ProducerConsumer};
constexpr int kConsumerRegs[] = {0, 216, 232, 240};
constexpr int kCpSegmentChunks[] = {0, 4, 8, 16, 32, 64, 128, 256};
constexpr int kChains[] = {1, 2};

std::vector<KernelConfig> enumerate_space() {
  std::vector<KernelConfig> space;
  for (Family f : kFamilies)
    for (int bv : kBlockV)
      for (int st : kStages)
        for (WarpRoles ro : kRoles)
          for (int regs : kConsumerRegs)
            for (int cp : kCpSegmentChunks)
              for (int ch : kChains)
                space.push_back(KernelConfig{.family = f,
                                             .block_v = bv,
                                             .stages = st,
                                             .roles = ro,
                                             .consumer_regs = regs,
                                             .cp_segment_chunks = cp,
                                             .chains_per_cta = ch});
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
