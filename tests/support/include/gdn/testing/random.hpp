// Seeded random numbers with a fixed, platform-independent sequence (xoshiro256** seeded by
// splitmix64, Box-Muller normals), so a seed printed by a failing test reproduces the same
// inputs on the CPU machine and on the GPU machine, whatever their standard libraries.
#pragma once

#include <cstdint>
#include <string>

namespace gdn::testing {

class Rng {
 public:
  explicit Rng(uint64_t seed);
  uint64_t next_u64();
  double uniform();              // [0, 1)
  double uniform(double lo, double hi);
  double normal();               // standard normal
  uint64_t below(uint64_t n);    // [0, n), n > 0

 private:
  uint64_t s_[4];
  double spare_normal_ = 0;
  bool has_spare_ = false;
};

// An independent stream for one purpose (tensor, head list...) derived from a case seed,
// so that turning one input on or off never changes the values of the others.
uint64_t derive_seed(uint64_t seed, uint64_t stream);

// The seed of a test run: $GDN_TEST_SEED when set (to reproduce a failure), else fresh
// from std::random_device (docs/spec.md: inputs are freshly random every run).
uint64_t test_seed();
// "seed=N (reproduce with GDN_TEST_SEED=N)", for SCOPED_TRACE and failure messages.
std::string seed_note(uint64_t seed);

}  // namespace gdn::testing
