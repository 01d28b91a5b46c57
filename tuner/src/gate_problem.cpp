#include "gdn/tuner/gate_problem.hpp"

namespace gdn::tuner {

std::string family_key(const db::ProblemRecord& p) {
  return "hqk=" + std::to_string(p.h_qk) + " hv=" + std::to_string(p.h_v) + " k=" +
         std::to_string(p.k) + " v=" + std::to_string(p.v) + " " + p.dtype;
}

db::ProblemRecord gate_problem(const db::ProblemRecord& p) {
  db::ProblemRecord g;
  g.shape_set_name = "gate";
  g.shape_set_hash = "gate";
  g.h_qk = p.h_qk;
  g.h_v = p.h_v;
  g.k = p.k;
  g.v = p.v;
  g.dtype = p.dtype;
  g.batch = 1;
  g.num_seqs = 2;
  g.total_tokens = 197;
  g.max_seqlen = 130;
  g.seqlens = kGateSeqlens;
  return g;
}

}  // namespace gdn::tuner
