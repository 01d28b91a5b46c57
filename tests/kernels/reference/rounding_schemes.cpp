#include "rounding_schemes.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "gdn/testing/compare.hpp"
#include "gdn/testing/random.hpp"

namespace gdn::testing {

namespace rr = ref::rounding;

namespace {

struct Named {
  const char* name;
  const char* what;
  void (*apply)(rr::Model&);
};

// The fused kernel's path: its roundings with 16-bit per-head dq, dk parts, short chunks in
// fp32 but S (exact only from h0).
void fused_fp32_h0(rr::Model& m) {
  m.fused = true;
  m.head_parts16 = true;
  m.split.short_chunks = rr::kAllPoints & ~rr::kStates;
  m.split.short_first_chunks = rr::kStates;
  m.split.to_fp32 = true;
}

const Named kSchemes[] = {
    {"float64", "no rounding: the float64 chunked backward", [](rr::Model& m) { m.points = 0; }},
    {"kernels", "the CUDA backward's roundings", [](rr::Model&) {}},
    {"short-all", "every point split in short chunks (the floor of repairs there)",
     [](rr::Model& m) { m.split.short_chunks = rr::kAllPoints; }},
    {"short-ds", "dS' split in short chunks", [](rr::Model& m) { m.split.short_chunks = rr::kDstate; }},
    {"short-vn", "T diag(beta) and V_new split in short chunks",
     [](rr::Model& m) { m.split.short_chunks = rr::kTbeta | rr::kVnew; }},
    {"short-vnw", "W', T diag(beta) and V_new split in short chunks",
     [](rr::Model& m) { m.split.short_chunks = rr::kLocalW | rr::kTbeta | rr::kVnew; }},
    {"short-ds-vn", "dS', T diag(beta) and V_new split in short chunks",
     [](rr::Model& m) { m.split.short_chunks = rr::kDstate | rr::kTbeta | rr::kVnew; }},
    {"short-ds-vnw", "dS', W', T diag(beta) and V_new split in short chunks",
     [](rr::Model& m) { m.split.short_chunks = rr::kDstate | rr::kLocalW | rr::kTbeta | rr::kVnew; }},
    {"short-repair",
     "S (from h0), dS' (from dht), dV_new, dW', W' and V_new split in short chunks",
     [](rr::Model& m) {
       m.split.short_chunks = rr::kStates | rr::kDstate | rr::kDvnew | rr::kDv | rr::kLocalW | rr::kVnew;
     }},
    {"short-fp32-h0",
     "every point in fp32 in short chunks but S, which only a short chunk that starts its "
     "sequence has exactly (h0): an fp32 repair of the short chunk after the backward",
     [](rr::Model& m) {
       m.split.short_chunks = rr::kAllPoints & ~rr::kStates;
       m.split.short_first_chunks = rr::kStates;
       m.split.to_fp32 = true;
     }},
    {"short-fp32", "every point in fp32 in short chunks",
     [](rr::Model& m) { m.split.short_chunks = rr::kAllPoints; m.split.to_fp32 = true; }},
    {"ends-exact", "the caller's fp32 h0 (dht) for S (dS') in a sequence's first (last) chunk",
     [](rr::Model& m) { m.exact_h0_first = m.exact_dht_last = true; }},
    {"ends-all", "every point split in a sequence's first and last chunks",
     [](rr::Model& m) { m.split.first_chunks = m.split.last_chunks = rr::kAllPoints; }},
    {"fused", "the fused kernel's roundings (fused_bwd.cuh)", [](rr::Model& m) { m.fused = true; }},
    {"fused-fp32-h0",
     "the fused kernel's roundings, its 16-bit per-head dq and dk parts and the fp32 repair of "
     "short chunks (its path)",
     fused_fp32_h0},
    {"fused-ends-exact",
     "fused-fp32-h0 with the caller's fp32 h0 (dht) for S (dS') in a sequence's first (last) chunk",
     [](rr::Model& m) {
       fused_fp32_h0(m);
       m.exact_h0_first = m.exact_dht_last = true;
     }},
    {"fused-fp32-parts", "fused-fp32-h0 with each value head's dq and dk summed over the GVA group in fp32",
     [](rr::Model& m) {
       fused_fp32_h0(m);
       m.head_parts16 = false;
     }},
};

}  // namespace

namespace {

// "every:P+Q": the points named P and Q (rr::point_names) split in every chunk, full ones too:
// what a repair that pays on every chunk would buy.
uint32_t every_chunk_points(const std::string& list) {
  uint32_t mask = 0;
  size_t begin = 0;
  while (begin <= list.size()) {
    const size_t end = std::min(list.find('+', begin), list.size());
    const std::string name = list.substr(begin, end - begin);
    const auto& names = rr::point_names();
    const auto it = std::find(names.begin(), names.end(), name);
    if (it == names.end()) {
      std::string known;
      for (const std::string& n : names) known += (known.empty() ? "" : ", ") + n;
      throw std::invalid_argument("scheme every:...: expected point names joined by '+' (" + known +
                                  "), got '" + name + "'");
    }
    mask |= 1u << (it - names.begin());
    begin = end + 1;
  }
  return mask;
}

}  // namespace

rr::Model scheme(const std::string& name, HalfType type) {
  rr::Model m;
  m.round16 = [type](double x) { return round_to_half(x, type); };
  if (name.rfind("every:", 0) == 0) {
    m.split.short_rows = 65;  // above a chunk's 64 rows: every chunk counts as short
    m.split.short_chunks = every_chunk_points(name.substr(6));
    return m;
  }
  for (const Named& s : kSchemes)
    if (name == s.name) {
      s.apply(m);
      return m;
    }
  throw std::invalid_argument("scheme: expected one of " + scheme_list() +
                              " or every:POINT[+POINT...], got '" + name + "'");
}

std::string scheme_list() {
  std::string out;
  for (const Named& s : kSchemes) out += std::string(out.empty() ? "" : ", ") + s.name;
  return out;
}

RandomCase edge_case_draw(const ShapeCase& shape, size_t index, uint64_t seed) {
  CaseOptions opt;
  opt.with_h0 = shape.with_h0;
  opt.with_dht = shape.with_dht;
  opt.dtype = index % 5 == 4 ? HalfType::FP16 : HalfType::BF16;
  return make_random_case(shape.shape, derive_seed(seed, index), opt);
}

bool BackwardErrors::fails(size_t i) const {
  const Tolerances t;
  const double bars[6] = {t.dq, t.dk, t.dv, t.dh0, t.dg, t.dbeta};
  return !(rel[i] <= bars[i]);
}

bool BackwardErrors::any_fails() const {
  for (size_t i = 0; i < rel.size(); ++i)
    if (fails(i)) return true;
  return false;
}

BackwardErrors backward_errors(const RandomCase& c, const rr::Model& m,
                               const ref::BwdOutputs& oracle, const ref::RunOptions& run) {
  const ref::BwdOutputs got = rr::rounded_backward(c.shape, c.inputs, c.grads, m, run);
  BackwardErrors e;
  e.rel = {ref::rel_rms(got.dq, oracle.dq),   ref::rel_rms(got.dk, oracle.dk),
           ref::rel_rms(got.dv, oracle.dv),   ref::rel_rms(got.dh0, oracle.dh0),
           ref::rel_rms(got.dg, oracle.dg),   ref::rel_rms(got.dbeta, oracle.dbeta)};
  return e;
}

void FailureTally::add(const BackwardErrors& e, uint64_t seed) {
  ++draws;
  if (e.any_fails()) ++failed;
  for (size_t i = 0; i < e.rel.size(); ++i) {
    if (e.fails(i)) ++fails[i];
    if (!(e.rel[i] <= worst[i])) {
      worst[i] = e.rel[i];
      worst_seed[i] = seed;
    }
  }
}

std::string FailureTally::describe() const {
  char buf[128];
  std::snprintf(buf, sizeof buf, "%d/%d fail;", failed, draws);
  std::string out = buf;
  for (size_t i = 0; i < fails.size(); ++i) {
    std::snprintf(buf, sizeof buf, " %s %d worst %.2e (seed %llu)%s", kBackwardOutputs[i], fails[i],
                  worst[i], static_cast<unsigned long long>(worst_seed[i]), i + 1 < fails.size() ? "," : "");
    out += buf;
  }
  return out;
}

}  // namespace gdn::testing
