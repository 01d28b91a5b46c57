#include "gdn/testing/shapes.hpp"

#include <sstream>

namespace gdn::testing {

ref::Shape dense_shape(int64_t B, int64_t T, int Hk, int Hv, int K, int V) {
  ref::Shape s;
  s.B = B;
  s.T = T;
  s.Hk = Hk;
  s.Hv = Hv;
  s.K = K;
  s.V = V;
  return s;
}

ref::Shape packed_shape(const std::vector<int64_t>& lengths, int Hk, int Hv, int K, int V) {
  ref::Shape s = dense_shape(1, 0, Hk, Hv, K, V);
  s.cu_seqlens.push_back(0);
  for (int64_t len : lengths) s.cu_seqlens.push_back(s.cu_seqlens.back() + len);
  s.T = s.cu_seqlens.back();
  return s;
}

namespace {

ShapeCase with(std::string name, ref::Shape s, bool h0 = true, bool dht = true,
               ref::StateLayout layout = ref::StateLayout::KV, bool final_state = true) {
  s.layout = layout;
  s.want_final_state = final_state;
  return {std::move(name), std::move(s), h0, dht};
}

std::vector<int64_t> lengths_of(const std::vector<int64_t>& cu) {
  std::vector<int64_t> lengths;
  for (size_t i = 1; i < cu.size(); ++i) lengths.push_back(cu[i] - cu[i - 1]);
  return lengths;
}

}  // namespace

std::vector<ShapeCase> edge_cases(int K, int V) {
  using L = ref::StateLayout;
  std::vector<ShapeCase> c;
  c.push_back(with("T1", dense_shape(1, 1, 1, 1, K, V)));
  c.push_back(with("T63_noh0", dense_shape(1, 63, 1, 2, K, V), false));
  c.push_back(with("T64_vk", dense_shape(1, 64, 2, 4, K, V), true, true, L::VK));
  c.push_back(with("T65_gva3", dense_shape(1, 65, 2, 6, K, V), true, false));
  c.push_back(with("T1000", dense_shape(1, 1000, 1, 4, K, V)));
  c.push_back(with("B3_T65_nofinal", dense_shape(3, 65, 2, 4, K, V), true, false, L::KV, false));
  c.push_back(with("B2_T130_vk_noh0", dense_shape(2, 130, 1, 2, K, V), false, true, L::VK));
  for (int ratio : {1, 2, 3, 4, 6, 8}) {
    const int Hk = ratio == 1 ? 2 : 1;
    c.push_back(with("gva" + std::to_string(ratio) + "_T100",
                     dense_shape(1, 100, Hk, Hk * ratio, K, V), ratio % 2 == 0, true,
                     ratio >= 4 ? L::VK : L::KV));
  }
  c.push_back(with("ragged7",
                   packed_shape(lengths_of({0, 410, 841, 1135, 2126, 2512, 4096}), 1, 2, K, V)));
  c.push_back(with("ragged2_vk", packed_shape(lengths_of({0, 47, 128}), 2, 4, K, V), true, true,
                   L::VK));
  c.push_back(with("lengths_0_1_0_64_64_0", packed_shape({0, 1, 0, 64, 64, 0}, 1, 3, K, V), true,
                   false));
  c.push_back(with("lengths_64_1_noh0_nofinal", packed_shape({64, 1}, 2, 2, K, V), false, true,
                   L::KV, false));
  c.push_back(with("one_packed_seq_T200", packed_shape({200}, 1, 2, K, V)));
  c.push_back(with("no_tokens", packed_shape({0, 0}, 1, 2, K, V)));
  return c;
}

std::vector<std::pair<int, int>> anchor_head_configs() {
  return {{2, 8}, {4, 16}, {8, 24}, {8, 32}, {16, 16}, {16, 32}, {16, 48}, {16, 64}, {32, 32}};
}

std::vector<ShapeCase> anchor_sample_cases(int K, int V) {
  std::vector<ShapeCase> c;
  c.push_back(with("tp8_1x8192", packed_shape({8192}, 2, 8, K, V)));
  c.push_back(with("tp4_2048x4", packed_shape({2048, 2048, 2048, 2048}, 4, 16, K, V)));
  c.push_back(with("h8_24_1024+7168", packed_shape({1024, 7168}, 8, 24, K, V)));
  c.push_back(with("h16_32_1024x8", packed_shape(std::vector<int64_t>(8, 1024), 16, 32, K, V)));
  c.push_back(with("tp1_4096+4096_vk", packed_shape({4096, 4096}, 16, 64, K, V), true, true,
                   ref::StateLayout::VK));
  c.push_back(with("h32_32_B2_T4096", dense_shape(2, 4096, 32, 32, K, V)));
  return c;
}

std::vector<ShapeCase> long_cases(int K, int V) {
  std::vector<ShapeCase> c;
  for (auto [Hk, Hv] : anchor_head_configs())
    c.push_back(with("long_h" + std::to_string(Hk) + "_" + std::to_string(Hv) + "_1x32768",
                     packed_shape({32768}, Hk, Hv, K, V)));
  return c;
}

void PrintTo(const ShapeCase& c, std::ostream* os) {
  *os << c.name << " {" << describe(c.shape) << (c.with_h0 ? " h0" : " noh0")
      << (c.with_dht ? " dht" : " nodht") << "}";
}

std::string describe(const ref::Shape& s) {
  std::ostringstream os;
  os << "B=" << s.B << " T=" << s.T << " N=" << s.num_seqs();
  if (!s.cu_seqlens.empty()) {
    os << " [";
    for (size_t i = 0; i < s.cu_seqlens.size(); ++i) os << (i ? "," : "") << s.cu_seqlens[i];
    os << "]";
  }
  os << " Hk=" << s.Hk << " Hv=" << s.Hv << " K=" << s.K << " V=" << s.V
     << (s.layout == ref::StateLayout::KV ? " KV" : " VK")
     << (s.want_final_state ? " final" : " nofinal");
  return os.str();
}

}  // namespace gdn::testing
