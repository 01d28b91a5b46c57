// 64-bit FNV-1a: tiny, stable across platforms and compilers, good enough to tell shape sets
// apart (not a cryptographic hash). Each added field ends with a separator byte so that
// ("ab","c") and ("a","bc") differ.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace gdn::problems {

class Fnv1a {
 public:
  Fnv1a& add(std::string_view field) {
    for (unsigned char c : field) mix(c);
    mix(0x1f);  // unit separator
    return *this;
  }
  std::uint64_t value() const { return state_; }

 private:
  void mix(unsigned char c) {
    state_ ^= c;
    state_ *= 0x100000001b3ULL;  // FNV prime
  }
  std::uint64_t state_ = 0xcbf29ce484222325ULL;  // FNV offset basis
};

std::string to_hex(std::uint64_t value);

}  // namespace gdn::problems
