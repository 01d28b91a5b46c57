// A seeded random-mutation fuzz loop for ctest: byte-level mutations of seed inputs (bit flips,
// byte runs, insertions, deletions, line duplication, splices between seeds, interesting
// tokens), run for a bounded time. Deterministic per seed: a failure names the seed and the
// iteration, and rerunning with the same seed reproduces the input.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace gdn::testing {

struct FuzzOptions {
  std::uint64_t seed = 1;
  std::chrono::milliseconds budget{5000};  // stops at this wall time ...
  std::size_t max_iterations = 200000;     // ... or after this many inputs
  std::size_t max_bytes = 1 << 16;         // inputs are cut to this size
  std::vector<std::string> tokens;         // spliced in at random places
};

// Returns how many inputs were tried. `check(input, iteration)` runs on each mutated input and
// must not crash; it reports failures itself (gtest assertions).
inline std::size_t run_mutation_fuzz(const std::vector<std::string>& seeds, const FuzzOptions& o,
                                     const std::function<void(const std::string&, std::size_t)>& check) {
  std::mt19937_64 rng(o.seed);
  auto pick = [&](std::size_t n) { return n == 0 ? 0 : static_cast<std::size_t>(rng() % n); };
  const auto deadline = std::chrono::steady_clock::now() + o.budget;
  std::size_t i = 0;
  for (; i < o.max_iterations && std::chrono::steady_clock::now() < deadline; ++i) {
    std::string s = seeds[pick(seeds.size())];
    const std::size_t rounds = 1 + pick(8);
    for (std::size_t r = 0; r < rounds; ++r) {
      switch (pick(8)) {
        case 0:  // flip a bit
          if (!s.empty()) s[pick(s.size())] ^= static_cast<char>(1u << pick(8));
          break;
        case 1:  // overwrite a run with one random byte
          if (!s.empty()) {
            const std::size_t at = pick(s.size()), n = 1 + pick(std::min<std::size_t>(64, s.size() - at));
            std::fill(s.begin() + static_cast<long>(at), s.begin() + static_cast<long>(at + n),
                      static_cast<char>(rng()));
          }
          break;
        case 2:  // insert random bytes
          s.insert(pick(s.size() + 1), std::string(1 + pick(8), static_cast<char>(rng())));
          break;
        case 3:  // delete a run
          if (!s.empty()) {
            const std::size_t at = pick(s.size());
            s.erase(at, 1 + pick(std::min<std::size_t>(256, s.size() - at)));
          }
          break;
        case 4:  // duplicate a line
          if (const auto nl = s.find('\n', pick(s.size() + 1)); nl != std::string::npos) {
            const auto begin = s.rfind('\n', nl == 0 ? 0 : nl - 1);
            const std::size_t from = begin == std::string::npos ? 0 : begin + 1;
            s.insert(from, s.substr(from, nl + 1 - from));
          }
          break;
        case 5:  // splice a piece of another seed
          if (const std::string& other = seeds[pick(seeds.size())]; !other.empty()) {
            const std::size_t at = pick(other.size());
            s.insert(pick(s.size() + 1), other.substr(at, 1 + pick(512)));
          }
          break;
        case 6:  // an interesting token
          if (!o.tokens.empty()) s.insert(pick(s.size() + 1), o.tokens[pick(o.tokens.size())]);
          break;
        default:  // truncate
          s.resize(pick(s.size() + 1));
          break;
      }
    }
    if (s.size() > o.max_bytes) s.resize(o.max_bytes);
    check(s, i);
  }
  return i;
}

}  // namespace gdn::testing
