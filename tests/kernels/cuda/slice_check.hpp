// Checks of a GPU run against the float64 reference of head slices (see head_slice.hpp),
// with the reference of every slice computed in parallel (std::async: one thread per slice).
#pragma once

#include <string>
#include <vector>

#include "device_harness.hpp"
#include "head_slice.hpp"

namespace gdn::testing::gpu {

struct SlicedReference {
  HeadSlice slice;
  ref::Shape shape;
  ref::FwdOutputs fwd;  // filled by forward_references
  ref::BwdOutputs bwd;  // filled by backward_references
};

std::vector<SlicedReference> forward_references(const RandomCase& c,
                                                const std::vector<HeadSlice>& slices);
std::vector<SlicedReference> backward_references(const RandomCase& c,
                                                 const std::vector<HeadSlice>& slices);

// The comparisons of one slice; names carry the slice ("o[h0..4)").
CheckReport check_forward_slice(const RandomCase& c, const SlicedReference& r,
                                const DeviceFwdResult& got);
CheckReport check_backward_slice(const RandomCase& c, const SlicedReference& r,
                                 const DeviceBwdResult& got);

// The largest rel-RMS error seen per output name (slice tags stripped), printed at the end
// of a test so a passing run still shows its margins.
class WorstErrors {
 public:
  // where: the case's label, printed beside the output's worst error (empty: none).
  void note(const CheckReport& r, const std::string& where = "");
  void print(const std::string& title) const;

 private:
  struct Worst {
    std::string output;
    double rel_rms;
    std::string where;
  };
  std::vector<Worst> worst_;
};

// Bit-identical reruns (determinism).
bool same_bits(const DeviceFwdResult& a, const DeviceFwdResult& b);
bool same_bits(const DeviceBwdResult& a, const DeviceBwdResult& b);

}  // namespace gdn::testing::gpu
