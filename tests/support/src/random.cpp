#include "gdn/testing/random.hpp"

#include <cmath>
#include <cstdlib>
#include <numbers>
#include <random>
#include <stdexcept>

namespace gdn::testing {

namespace {

uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

}  // namespace

Rng::Rng(uint64_t seed) {
  uint64_t state = seed;
  for (uint64_t& word : s_) word = splitmix64(state);
}

uint64_t Rng::next_u64() {
  const uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

double Rng::uniform() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }

double Rng::uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }

double Rng::normal() {
  if (has_spare_) {
    has_spare_ = false;
    return spare_normal_;
  }
  const double u1 = 1.0 - uniform();  // (0, 1]: log is finite
  const double u2 = uniform();
  const double radius = std::sqrt(-2.0 * std::log(u1));
  spare_normal_ = radius * std::sin(2.0 * std::numbers::pi * u2);
  has_spare_ = true;
  return radius * std::cos(2.0 * std::numbers::pi * u2);
}

uint64_t Rng::below(uint64_t n) {
  if (n == 0) throw std::invalid_argument("gdn::testing::Rng::below: n: expected > 0, got 0");
  return next_u64() % n;  // the modulo bias (< n / 2^64) is irrelevant for test inputs
}

uint64_t derive_seed(uint64_t seed, uint64_t stream) {
  uint64_t state = seed ^ (stream * 0xd1b54a32d192ed03ull);
  return splitmix64(state);
}

uint64_t test_seed() {
  if (const char* env = std::getenv("GDN_TEST_SEED"); env && *env) {
    char* end = nullptr;
    const unsigned long long value = std::strtoull(env, &end, 0);
    if (*end != '\0')
      throw std::invalid_argument(std::string("GDN_TEST_SEED: expected an unsigned integer, got '") +
                                  env + "'");
    return value;
  }
  std::random_device device;
  return (static_cast<uint64_t>(device()) << 32) ^ device();
}

std::string seed_note(uint64_t seed) {
  return "seed=" + std::to_string(seed) + " (reproduce with GDN_TEST_SEED=" +
         std::to_string(seed) + ")";
}

}  // namespace gdn::testing
