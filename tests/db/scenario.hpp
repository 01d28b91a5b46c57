// One small sweep with known answers, used by the model, selection, export and report tests.
//
//   problem (fwd, k = v = 128, bf16)      A (v64 s2)  B (v128 s2)  C (v64 s3)  S (staged)
//   P0 16/32, 1 seq,  4096 tokens         1.00        1.10         1.30        Incorrect
//   P1 16/32, 1 seq,  5000 tokens         1.20        1.25         1.50        Incorrect
//   P2 16/32, 1 seq,  65536 tokens        10.0        8.0          12.0        Timeout
//   P3 16/32, 8 seqs, 8192 tokens (2048)  2.0         2.5          Crashed     4.0
//   P4 32/32, 1 seq,  4096 tokens         Incorrect   Unsupported  3.0         LaunchFailed
//
// Buckets (num_seqs, tokens, max_seqlen as log2): P0 and P1 share (0, 12, 12): A wins with
// geometric means 1.0954 vs B 1.1726; P2 (0, 16, 16): B by 25%; P3 (3, 13, 11): A by 25%;
// P4's bucket (32/32 heads): C alone.
#pragma once

#include "db_fixture.hpp"

namespace gdn::db::test {

struct Scenario {
  std::int64_t sweep = 0;
  std::int64_t a = 0, b = 0, c = 0, s = 0;
  std::int64_t p[5] = {};
};

inline Scenario write_scenario(Database& db, double p2_time_of_a = 10.0) {
  ResultsWriter w(db);
  Scenario sc;
  const std::int64_t device = w.register_device(h200());
  const std::int64_t build_id = w.register_build(build());
  sc.a = w.register_variant(fused_variant("gdn_fwd_A", 64, 2));
  sc.b = w.register_variant(fused_variant("gdn_fwd_B", 128, 2));
  sc.c = w.register_variant(fused_variant("gdn_fwd_C", 64, 3));
  VariantRecord staged;
  staged.name = "gdn_fwd_S";
  sc.s = w.register_variant(staged);
  sc.p[0] = w.register_problem(problem(0, 16, 32, 1, 4096, 4096));
  sc.p[1] = w.register_problem(problem(1, 16, 32, 1, 5000, 5000));
  sc.p[2] = w.register_problem(problem(2, 16, 32, 1, 65536, 65536));
  sc.p[3] = w.register_problem(problem(3, 16, 32, 8, 8192, 2048));
  sc.p[4] = w.register_problem(problem(4, 32, 32, 1, 4096, 4096));
  sc.sweep = w.begin_sweep(sweep_of(device, build_id));
  const std::int64_t sw = sc.sweep;
  insert(w, passed(sw, sc.a, sc.p[0], 1.00));
  insert(w, passed(sw, sc.b, sc.p[0], 1.10));
  insert(w, passed(sw, sc.c, sc.p[0], 1.30));
  insert(w, failed(sw, sc.s, sc.p[0], Outcome::Incorrect, "o rel rms 0.3 > 0.02"));
  insert(w, passed(sw, sc.a, sc.p[1], 1.20));
  insert(w, passed(sw, sc.b, sc.p[1], 1.25));
  insert(w, passed(sw, sc.c, sc.p[1], 1.50));
  insert(w, failed(sw, sc.s, sc.p[1], Outcome::Incorrect, "o rel rms 0.3 > 0.02"));
  insert(w, passed(sw, sc.a, sc.p[2], p2_time_of_a));
  insert(w, passed(sw, sc.b, sc.p[2], 8.0));
  insert(w, passed(sw, sc.c, sc.p[2], 12.0));
  insert(w, failed(sw, sc.s, sc.p[2], Outcome::Timeout, "no completion in 2000 ms"));
  insert(w, passed(sw, sc.a, sc.p[3], 2.0));
  insert(w, passed(sw, sc.b, sc.p[3], 2.5));
  insert(w, failed(sw, sc.c, sc.p[3], Outcome::Crashed, "illegal memory access"));
  insert(w, passed(sw, sc.s, sc.p[3], 4.0));
  insert(w, failed(sw, sc.a, sc.p[4], Outcome::Incorrect, "ht rel rms 0.1"));
  insert(w, failed(sw, sc.b, sc.p[4], Outcome::Unsupported, "h_v/h_qk = 1 not compiled"));
  insert(w, passed(sw, sc.c, sc.p[4], 3.0));
  insert(w, failed(sw, sc.s, sc.p[4], Outcome::LaunchFailed, "too many resources requested"));
  w.set_sweep_status(sw, SweepStatus::Finished);
  return sc;
}

}  // namespace gdn::db::test
