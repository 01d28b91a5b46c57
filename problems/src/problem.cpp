// Derived quantities of a Problem and its stable content hash.
#include <algorithm>
#include <numeric>

#include "content_hash.hpp"
#include "gdn/problems/shape_set.hpp"
#include "seqlens.hpp"

namespace gdn::problems {

std::int64_t Problem::batch() const {
  return layout == Layout::Batched ? static_cast<std::int64_t>(seqlens.size()) : 1;
}

std::int64_t Problem::tokens_per_row() const {
  if (layout == Layout::Batched) return seqlens.empty() ? 0 : seqlens.front();
  return total_tokens();
}

std::int64_t Problem::total_tokens() const {
  return std::accumulate(seqlens.begin(), seqlens.end(), std::int64_t{0});
}

std::int64_t Problem::num_seqs() const { return static_cast<std::int64_t>(seqlens.size()); }

std::int64_t Problem::max_seqlen() const {
  return seqlens.empty() ? 0 : *std::max_element(seqlens.begin(), seqlens.end());
}

std::vector<std::int64_t> Problem::cu_seqlens() const {
  std::vector<std::int64_t> offsets(seqlens.size() + 1, 0);
  std::partial_sum(seqlens.begin(), seqlens.end(), offsets.begin() + 1);
  return offsets;
}

std::string Problem::seqlens_text() const { return format_seqlens(seqlens); }

std::string Problem::seqlens_list() const {
  std::string out;
  for (std::int64_t length : seqlens) {
    if (!out.empty()) out += ',';
    out += std::to_string(length);
  }
  return out;
}

std::uint64_t Problem::content_hash() const {
  // A fixed, explicit serialisation: the hash never depends on struct layout or endianness.
  Fnv1a hash;
  hash.add("gdn-problem-v1");
  hash.add(std::to_string(h_qk)).add(std::to_string(h_v));
  hash.add(std::to_string(k)).add(std::to_string(v));
  hash.add(dtype_name(dtype)).add(layout_name(layout));
  hash.add(seqlens_list());
  return hash.value();
}

std::string Problem::hash_hex() const { return to_hex(content_hash()); }

std::string ShapeSet::hash_hex() const { return to_hex(content_hash); }

const Problem* ShapeSet::find(std::string_view problem_name) const {
  for (const Problem& p : problems)
    if (p.name == problem_name) return &p;
  return nullptr;
}

const char* dtype_name(gdn_dtype d) {
  switch (d) {
    case GDN_BF16: return "bf16";
    case GDN_FP16: return "fp16";
    case GDN_FP32: return "fp32";
  }
  return "unknown";
}

const char* layout_name(Layout layout) {
  return layout == Layout::Batched ? "batched" : "packed";
}

}  // namespace gdn::problems
