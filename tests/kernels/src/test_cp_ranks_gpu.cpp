// Context parallelism across ranks through the C API (gdn_cp.h), with R ranks simulated in one
// process on one GPU: every rank's calls run phase by phase (begin for all ranks, the chains
// over the carries the ranks would all-gather, end for all ranks). The outputs and every
// gradient must equal the single-GPU call on the whole problem within the bars of
// docs/spec.md section 4, and every element must be written (outputs are poisoned first).
// Label gpu: skipped without a device.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "gdn/gdn.h"
#include "gdn/gdn_cp.h"
#include "gdn/testing/compare.hpp"
#include "gdn/testing/random.hpp"
#include "gdn/testing/random_case.hpp"

namespace {

using gdn::testing::HalfType;

#define CUDA_OK(call) ASSERT_EQ((call), cudaSuccess) << #call
#define GDN_OK_(call) ASSERT_EQ((call), GDN_OK) << #call << ": " << gdn_last_error()

// Device buffers of one test, freed together.
class DeviceArena {
 public:
  ~DeviceArena() {
    for (void* b : buffers_) cudaFree(b);
  }
  template <typename T>
  T* upload(const std::vector<T>& host) {
    if (host.empty()) return nullptr;
    T* ptr = alloc<T>(host.size());
    if (ptr != nullptr) cudaMemcpy(ptr, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice);
    return ptr;
  }
  template <typename T>
  T* alloc(size_t count) {
    void* ptr = nullptr;
    if (cudaMalloc(&ptr, count * sizeof(T) + 16) != cudaSuccess) return nullptr;
    buffers_.push_back(ptr);
    return static_cast<T*>(ptr);
  }
  // A buffer holding the poison pattern, as the kernel tests use.
  template <typename T>
  T* poisoned(size_t count) {
    T* ptr = alloc<T>(count);
    if (ptr != nullptr) cudaMemset(ptr, 0xFF, count * sizeof(T));
    return ptr;
  }

 private:
  std::vector<void*> buffers_;
};

template <typename T>
std::vector<T> download(const T* ptr, size_t count) {
  std::vector<T> host(count);
  if (ptr != nullptr) cudaMemcpy(host.data(), ptr, count * sizeof(T), cudaMemcpyDeviceToHost);
  return host;
}

struct Outputs {
  std::vector<uint16_t> o, dq, dk, dv;
  std::vector<float> ht, dg, dbeta, dh0;
};

struct Case {
  std::vector<int64_t> cu_seqlens;    // global offsets (one sequence: {0, T})
  std::vector<int64_t> rank_offsets;  // [R + 1]
  int Hk = 2, Hv = 4;
  bool with_h0 = true, with_dht = true;
  gdn_state_layout layout = GDN_STATE_KV;
};

class CpRanks : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!gdn_device_available()) GTEST_SKIP() << "skipped: no CUDA device";
  }

  void run(const Case& c) {
    const uint64_t seed = gdn::testing::test_seed();
    SCOPED_TRACE(gdn::testing::seed_note(seed));
    gdn::ref::Shape shape;
    shape.T = c.cu_seqlens.back();
    shape.cu_seqlens = c.cu_seqlens;
    shape.Hk = c.Hk;
    shape.Hv = c.Hv;
    shape.layout = c.layout == GDN_STATE_VK ? gdn::ref::StateLayout::VK : gdn::ref::StateLayout::KV;
    gdn::testing::CaseOptions options;
    options.with_h0 = c.with_h0;
    options.with_dht = c.with_dht;
    options.with_reference = false;
    const gdn::testing::RandomCase rc = gdn::testing::make_random_case(shape, seed, options);
    const auto& h = rc.host;
    const int64_t T = shape.T, N = static_cast<int64_t>(c.cu_seqlens.size()) - 1;
    const int64_t state = int64_t{c.Hv} * 128 * 128;

    DeviceArena dev;
    const auto* q = dev.upload(h.q);
    const auto* k = dev.upload(h.k);
    const auto* v = dev.upload(h.v);
    const auto* d_o = dev.upload(h.d_o);
    const float* g = dev.upload(h.g);
    const float* beta = dev.upload(h.beta);
    const float* h0 = dev.upload(h.h0);
    const float* dht = dev.upload(h.dht);
    std::vector<int32_t> cu32(c.cu_seqlens.begin(), c.cu_seqlens.end());
    const int32_t* cu = dev.upload(cu32);

    gdn_problem whole;
    gdn_problem_init(&whole, 1, T, c.Hk, c.Hv, 128, 128);
    whole.cu_seqlens = cu;
    whole.cu_seqlens_host = cu32.data();
    whole.num_seqs = N;
    whole.state_layout = c.layout;
    const size_t qk = T * c.Hk * 128, vv = T * c.Hv * 128, gates = T * c.Hv;

    // The single-GPU call on the whole problem.
    Outputs want;
    {
      gdn_fwd_args a{};
      a.q = q, a.k = k, a.v = v, a.g = g, a.beta = beta, a.h0 = h0;
      auto* o = dev.alloc<uint16_t>(vv);
      auto* ht = dev.alloc<float>(N * state);
      a.o = o, a.ht = ht;
      GDN_OK_(gdn_fwd(&whole, &a, nullptr));
      gdn_bwd_args b{};
      b.q = q, b.k = k, b.v = v, b.g = g, b.beta = beta, b.h0 = h0, b.d_o = d_o, b.dht = dht;
      auto *dq = dev.alloc<uint16_t>(qk), *dk = dev.alloc<uint16_t>(qk);
      auto* dv = dev.alloc<uint16_t>(vv);
      auto *dg = dev.alloc<float>(gates), *dbeta = dev.alloc<float>(gates);
      auto* dh0 = dev.alloc<float>(N * state);
      b.dq = dq, b.dk = dk, b.dv = dv, b.dg = dg, b.dbeta = dbeta, b.dh0 = dh0;
      GDN_OK_(gdn_bwd(&whole, &b, nullptr));
      CUDA_OK(cudaDeviceSynchronize());
      want = {download(o, vv), download(dq, qk), download(dk, qk), download(dv, vv),
              download(ht, N * state), download(dg, gates), download(dbeta, gates),
              download(dh0, N * state)};
    }

    // The same problem over R simulated ranks.
    const int R = static_cast<int>(c.rank_offsets.size()) - 1;
    auto* o = dev.poisoned<uint16_t>(vv);
    auto* ht = dev.poisoned<float>(N * state);
    auto *dq = dev.poisoned<uint16_t>(qk), *dk = dev.poisoned<uint16_t>(qk);
    auto* dv = dev.poisoned<uint16_t>(vv);
    auto *dg = dev.poisoned<float>(gates), *dbeta = dev.poisoned<float>(gates);
    auto* dh0 = dev.poisoned<float>(N * state);
    const size_t carry_bytes = gdn_cp_fwd_carry_bytes(&whole);
    const size_t dcarry_bytes = gdn_cp_bwd_carry_bytes(&whole);
    ASSERT_EQ(carry_bytes, size_t{4} * c.Hv * 128 * 256);
    ASSERT_EQ(dcarry_bytes, size_t{4} * c.Hv * 128 * 128);
    const int64_t carry_floats = carry_bytes / 4, dcarry_floats = dcarry_bytes / 4;
    float* carries = dev.alloc<float>(R * carry_floats);
    float* dcarries = dev.alloc<float>(R * dcarry_floats);
    float* starts = dev.alloc<float>(R * state);
    float* end_grads = dev.alloc<float>(R * state);

    struct Rank {
      gdn_cp_rank_plan plan{};
      std::vector<int32_t> local_cu;
      gdn_problem p{};
      gdn_fwd_args f{};
      gdn_bwd_args b{};
    };
    std::vector<Rank> ranks(R);
    for (int r = 0; r < R; ++r) {
      Rank& rk = ranks[r];
      std::vector<int64_t> local(N + 1);
      GDN_OK_(gdn_cp_plan(c.cu_seqlens.data(), N, c.rank_offsets.data(), R, r, &rk.plan,
                          local.data(), N + 1));
      rk.local_cu.assign(local.begin(), local.begin() + rk.plan.num_local_seqs + 1);
      const int64_t t0 = rk.plan.token_begin, rows = rk.plan.first_seq;
      gdn_problem_init(&rk.p, 1, rk.plan.token_end - t0, c.Hk, c.Hv, 128, 128);
      rk.p.cu_seqlens = dev.upload(rk.local_cu);
      rk.p.cu_seqlens_host = rk.local_cu.data();
      rk.p.num_seqs = rk.plan.num_local_seqs;
      rk.p.state_layout = c.layout;
      const auto at = [&](auto* base, int64_t per_token) {
        return base == nullptr ? nullptr : base + t0 * per_token;
      };
      const auto row = [&](auto* base) { return base == nullptr ? nullptr : base + rows * state; };
      rk.f.q = at(q, c.Hk * 128), rk.f.k = at(k, c.Hk * 128), rk.f.v = at(v, c.Hv * 128);
      rk.f.g = at(g, c.Hv), rk.f.beta = at(beta, c.Hv), rk.f.h0 = row(h0);
      rk.f.o = at(o, c.Hv * 128), rk.f.ht = row(ht);
      rk.b.q = rk.f.q, rk.b.k = rk.f.k, rk.b.v = rk.f.v, rk.b.g = rk.f.g, rk.b.beta = rk.f.beta;
      rk.b.h0 = rk.f.h0, rk.b.d_o = at(d_o, c.Hv * 128), rk.b.dht = row(dht);
      rk.b.dq = at(dq, c.Hk * 128), rk.b.dk = at(dk, c.Hk * 128), rk.b.dv = at(dv, c.Hv * 128);
      rk.b.dg = at(dg, c.Hv), rk.b.dbeta = at(dbeta, c.Hv), rk.b.dh0 = row(dh0);
    }
    for (int r = 0; r < R; ++r)
      GDN_OK_(gdn_cp_fwd_begin(&ranks[r].p, &ranks[r].plan, &ranks[r].f,
                               carries + r * carry_floats, nullptr));
    for (int r = 0; r < R; ++r) {
      const gdn_cp_rank_plan& pl = ranks[r].plan;
      if (pl.fwd_chain_count > 0)
        GDN_OK_(gdn_cp_fwd_chain(&ranks[r].p, carries + pl.fwd_chain_first * carry_floats,
                                 pl.fwd_chain_count, starts + r * state, nullptr));
    }
    for (int r = 0; r < R; ++r)
      GDN_OK_(gdn_cp_fwd_end(&ranks[r].p, &ranks[r].plan, &ranks[r].f, starts + r * state,
                             nullptr));
    for (int r = 0; r < R; ++r)
      GDN_OK_(gdn_cp_bwd_begin(&ranks[r].p, &ranks[r].plan, &ranks[r].b, starts + r * state,
                               dcarries + r * dcarry_floats, nullptr));
    for (int r = 0; r < R; ++r) {
      const gdn_cp_rank_plan& pl = ranks[r].plan;
      if (pl.bwd_chain_count > 0)
        GDN_OK_(gdn_cp_bwd_chain(&ranks[r].p, carries + pl.bwd_chain_first * carry_floats,
                                 dcarries + pl.bwd_chain_first * dcarry_floats,
                                 pl.bwd_chain_count, end_grads + r * state, nullptr));
    }
    for (int r = 0; r < R; ++r)
      GDN_OK_(gdn_cp_bwd_end(&ranks[r].p, &ranks[r].plan, &ranks[r].b, starts + r * state,
                             end_grads + r * state, nullptr));
    CUDA_OK(cudaDeviceSynchronize());

    const gdn::testing::Tolerances bars;
    const auto ref16 = [](const std::vector<uint16_t>& x) {
      return gdn::testing::to_double(x, HalfType::BF16);
    };
    const auto ref32 = [](const std::vector<float>& x) { return gdn::testing::to_double(x); };
    std::vector<gdn::testing::OutputCheck> checks = {
        gdn::testing::check_output("o", download(o, vv), HalfType::BF16, ref16(want.o), bars.o),
        gdn::testing::check_output("ht", download(ht, N * state), ref32(want.ht), bars.ht),
        gdn::testing::check_output("dq", download(dq, qk), HalfType::BF16, ref16(want.dq), bars.dq),
        gdn::testing::check_output("dk", download(dk, qk), HalfType::BF16, ref16(want.dk), bars.dk),
        gdn::testing::check_output("dv", download(dv, vv), HalfType::BF16, ref16(want.dv), bars.dv),
        gdn::testing::check_output("dg", download(dg, gates), ref32(want.dg), bars.dg),
        gdn::testing::check_output("dbeta", download(dbeta, gates), ref32(want.dbeta), bars.dbeta),
        gdn::testing::check_output("dh0", download(dh0, N * state), ref32(want.dh0), bars.dh0),
    };
    for (const auto& check : checks) EXPECT_TRUE(check.passed()) << check.describe();
    // What the ranks exchanged: carries only, their size independent of the token count.
    std::printf("R = %d, T = %lld, Hv = %d: all-gathered per rank %zu bytes forward, %zu bytes "
                "backward (R - 1 carries of %zu / %zu bytes)\n",
                R, static_cast<long long>(T), c.Hv, (R - 1) * carry_bytes,
                (R - 1) * dcarry_bytes, carry_bytes, dcarry_bytes);
  }
};

TEST_F(CpRanks, OneSequenceOverTwoRanks) {
  run({.cu_seqlens = {0, 1000}, .rank_offsets = {0, 500, 1000}});
}

TEST_F(CpRanks, OneSequenceOverFourUnevenRanksWithOneTokenRank) {
  // Ranks 1 and 2 hold one piece continuing on both sides (transition carries).
  run({.cu_seqlens = {0, 1000}, .rank_offsets = {0, 100, 450, 451, 1000}});
}

TEST_F(CpRanks, OneSequenceOverEightRanksWithoutH0OrDht) {
  run({.cu_seqlens = {0, 2048},
       .rank_offsets = {0, 256, 512, 768, 1024, 1280, 1536, 1792, 2048},
       .with_h0 = false,
       .with_dht = false});
}

TEST_F(CpRanks, RaggedPackStraddlingThreeRanks) {
  run({.cu_seqlens = {0, 410, 841, 1135, 2126, 2512, 4096},
       .rank_offsets = {0, 1365, 2730, 4096},
       .Hk = 1,
       .Hv = 3});
}

TEST_F(CpRanks, RaggedPackOverFiveRanksStateLayoutVk) {
  run({.cu_seqlens = {0, 410, 841, 1135, 2126, 2512, 4096},
       .rank_offsets = {0, 900, 1000, 2000, 2200, 4096},
       .layout = GDN_STATE_VK});
}

TEST_F(CpRanks, ZeroLengthAndOneTokenSequencesAtRankBoundaries) {
  // A zero-length sequence on each side of a boundary, a one-token sequence ending one,
  // a boundary falling exactly between two sequences.
  run({.cu_seqlens = {0, 0, 300, 300, 500, 501, 501, 1000, 1000},
       .rank_offsets = {0, 300, 501, 750, 1000},
       .Hk = 2,
       .Hv = 2});
}

}  // namespace
