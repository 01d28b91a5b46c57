// A host-only stand-in for a registry variant: a name and config (real or made up), a
// can_implement the test decides, and no kernels. For tests of selection and dispatch rules.
#pragma once

#include <string>

#include "gdn/variant.hpp"

namespace gdn::testing {

class FakeVariant final : public Variant {
 public:
  FakeVariant(Pass pass, KernelConfig config, std::string name, bool implementable = true)
      : pass_(pass), config_(config), name_(std::move(name)), implementable_(implementable) {
    config_.pass = pass;  // the config carries the pass, as a registered variant's does
  }
  explicit FakeVariant(const Variant& real, bool implementable = true)
      : FakeVariant(real.pass(), real.config(), real.name(), implementable) {}

  Pass pass() const override { return pass_; }
  const KernelConfig& config() const override { return config_; }
  const std::string& name() const override { return name_; }
  std::string describe() const override { return name_; }
  Implementable can_implement(const gdn_problem&) const override {
    return implementable_ ? Implementable{true, ""} : Implementable{false, "fake: refused"};
  }
  size_t workspace_bytes(const gdn_problem&) const override { return 0; }
  gdn_status run_fwd(const gdn_problem&, const gdn_fwd_args&, gdn_stream_t) const override {
    return GDN_ERROR_INTERNAL;
  }
  gdn_status run_bwd(const gdn_problem&, const gdn_bwd_args&, gdn_stream_t) const override {
    return GDN_ERROR_INTERNAL;
  }
  Resources resources() const override { return resources_; }
  // What a test says the kernel's resources are (default: unknown, as without a device).
  void set_resources(const Resources& r) { resources_ = r; }

 private:
  Pass pass_;
  KernelConfig config_;
  std::string name_;
  bool implementable_;
  Resources resources_{};
};

}  // namespace gdn::testing
