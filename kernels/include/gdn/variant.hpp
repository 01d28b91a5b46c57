// The one type-erased variant interface. The tuner, tests, profiler and GUI iterate the
// registry and never name a kernel type. Registration is explicit (no static initialisers):
// the generated file kernels/generated/registry_*.cpp lists every compiled variant.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "gdn/gdn.h"
#include "gdn/variant_config.hpp"

namespace gdn {

enum class Pass : std::uint8_t { Forward = 0, Backward = 1 };

// The name of a variant: config_name with the pass as its prefix (gdn_fwd_... or gdn_bwd_...),
// so that a forward and a backward variant of one config never share a name.
std::string variant_name(Pass pass, const KernelConfig& c);

struct Implementable {
  bool ok;
  std::string reason;  // why not, naming the field or problem property; "" when ok
};

class Variant {
 public:
  virtual ~Variant() = default;
  virtual Pass pass() const = 0;
  virtual const KernelConfig& config() const = 0;
  virtual const std::string& name() const = 0;
  // One line for humans: family, tile shape, threads, shared memory.
  virtual std::string describe() const = 0;
  // check_config plus problem-dependent rules (head dims, dtypes, lengths). Host only.
  virtual Implementable can_implement(const gdn_problem& p) const = 0;
  virtual size_t workspace_bytes(const gdn_problem& p) const = 0;
  // Arguments are validated by the caller (gdn_validate_*); run only launches.
  virtual gdn_status run_fwd(const gdn_problem& p, const gdn_fwd_args& a,
                             gdn_stream_t s) const = 0;
  virtual gdn_status run_bwd(const gdn_problem& p, const gdn_bwd_args& a,
                             gdn_stream_t s) const = 0;
  // Static kernel resources (from cudaFuncGetAttributes), filled once a device exists;
  // -1 when unknown (no device).
  struct Resources {
    int registers = -1;           // per thread, main kernel
    int shared_bytes = -1;        // static + dynamic, main kernel
    int local_bytes = -1;         // spills, main kernel
    int ctas_per_sm = -1;         // CTAs of the main kernel resident on one SM at once
    int threads = -1;             // threads per CTA of the main kernel (known without a device)
  };
  virtual Resources resources() const = 0;
};

// Every variant compiled into this build, in a stable order.
std::span<const Variant* const> registry();
// nullptr when no variant has that name.
const Variant* find_variant(std::string_view name);

// The full space of configs (valid or not) the generator enumerates, for `gdnlab space`.
std::span<const KernelConfig> full_config_space();

}  // namespace gdn
