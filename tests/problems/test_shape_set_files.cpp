// The committed shape sets: loading by name and by path, every row valid for the C API, the
// anchor sets matching the published anchor tables, and the edge set covering what docs/spec.md
// section 4 asks for.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <unistd.h>

#include "gdn/problems/api_problem.hpp"
#include "gdn/problems/shape_set.hpp"

namespace {

namespace fs = std::filesystem;
using gdn::problems::load_shape_set;
using gdn::problems::ShapeSet;
using gdn::problems::ShapeSetError;

const fs::path kRoot = GDN_TEST_SOURCE_ROOT;

// The rows of a published anchor CSV (comment lines skipped), as column -> value maps.
std::vector<std::map<std::string, std::string>> read_anchor_csv(const fs::path& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in) << "cannot open " << path;
  std::vector<std::string> header;
  std::vector<std::map<std::string, std::string>> rows;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line.front() == '#') continue;
    std::vector<std::string> cells;
    std::stringstream cells_in(line);
    for (std::string cell; std::getline(cells_in, cell, ',');) cells.push_back(cell);
    if (header.empty()) {
      header = cells;
      continue;
    }
    std::map<std::string, std::string> row;
    for (size_t i = 0; i < header.size() && i < cells.size(); ++i) row[header[i]] = cells[i];
    rows.push_back(row);
  }
  return rows;
}

// The forward table's notation: "A+B" lists lengths; "AxB" is count x length where the
// length is the larger number ("1x32768" one sequence, "8192x4" four of 8192).
std::pair<int64_t, int64_t> anchor_tokens_and_seqs(const std::string& layout) {
  if (const size_t x = layout.find('x'); x != std::string::npos) {
    const int64_t a = std::stoll(layout.substr(0, x)), b = std::stoll(layout.substr(x + 1));
    return {a * b, std::min(a, b)};
  }
  int64_t tokens = 0, seqs = 0;
  std::stringstream in(layout);
  for (std::string term; std::getline(in, term, '+'); ++seqs) tokens += std::stoll(term);
  return {tokens, seqs};
}

TEST(ShapeSetFiles, LoadsByNameAndByPath) {
  const ShapeSet by_name = load_shape_set("smoke");
  EXPECT_EQ(by_name.name, "smoke");
  EXPECT_FALSE(by_name.problems.empty());
  const ShapeSet by_path = load_shape_set((kRoot / "scripts/shapes/smoke.csv").string());
  EXPECT_EQ(by_path.content_hash, by_name.content_hash);
  EXPECT_EQ(by_path.name, "smoke");
}

TEST(ShapeSetFiles, UnknownNameListsTheKnownSets) {
  try {
    load_shape_set("no_such_set");
    ADD_FAILURE() << "no error";
  } catch (const ShapeSetError& e) {
    const std::string m = e.what();
    std::printf("    %s\n", m.c_str());
    EXPECT_NE(m.find("no shape set named 'no_such_set'"), std::string::npos) << m;
    EXPECT_NE(m.find("smoke"), std::string::npos) << m;
    EXPECT_NE(m.find("fwd_anchors"), std::string::npos) << m;
  }
}

TEST(ShapeSetFiles, MissingPathIsReported) {
  try {
    load_shape_set("/nonexistent/dir/set.csv");
    ADD_FAILURE() << "no error";
  } catch (const ShapeSetError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/dir/set.csv: cannot open the file"),
              std::string::npos)
        << e.what();
  }
}

TEST(ShapeSetFiles, MalformedFileReportsItsPathAndLine) {
  const fs::path path = fs::temp_directory_path() / "gdn_malformed_shape_set.csv";
  {
    std::ofstream out(path);
    out << "# comment\nname,h_qk,h_v,k,v,dtype,layout,seqlens,tag\n"
           "ok,1,1,128,128,bf16,packed,5,\nbad,3,4,128,128,bf16,packed,5,\n";
  }
  try {
    load_shape_set(path.string());
    ADD_FAILURE() << "no error";
  } catch (const ShapeSetError& e) {
    const std::string m = e.what();
    std::printf("    %s\n", m.c_str());
    EXPECT_NE(m.find(path.string() + ":4: h_v = 4 must be a multiple of h_qk = 3"),
              std::string::npos)
        << m;
  }
  fs::remove(path);
}

TEST(ShapeSetFiles, EveryCommittedSetLoadsAndEveryRowIsAValidApiProblem) {
  const std::vector<std::string> names = gdn::problems::available_shape_sets();
  for (const char* expected : {"fwd_anchors", "bwd_anchors", "product", "smoke", "edge"})
    EXPECT_NE(std::find(names.begin(), names.end(), expected), names.end()) << expected;
  for (const std::string& name : names) {
    const ShapeSet set = load_shape_set(name);
    for (const auto& problem : set.problems) {
      gdn::problems::ApiProblem api = gdn::problems::to_api_problem(problem);
      if (api.cu_seqlens_host() != nullptr)  // stands in for the uploaded device copy
        api.problem.cu_seqlens = api.cu_seqlens_host();
      EXPECT_EQ(gdn_validate_problem(&api.problem), GDN_OK)
          << name << "/" << problem.name << ": " << gdn_last_error();
    }
  }
}

TEST(ShapeSetFiles, ForwardAnchorsAreThePublishedTable) {
  const ShapeSet set = load_shape_set("fwd_anchors");
  const auto anchors = read_anchor_csv(kRoot / "bench/anchors/flashqla_h200_fwd.csv");
  ASSERT_EQ(anchors.size(), 171u);
  ASSERT_EQ(set.problems.size(), 171u);
  std::set<std::pair<int, int>> head_configs;
  std::set<std::string> layouts;
  int64_t anchor_total = 0, set_total = 0;
  for (size_t i = 0; i < anchors.size(); ++i) {
    const auto& a = anchors[i];
    const auto& p = set.problems[i];
    const int h_qk = std::stoi(a.at("h_qk")), h_v = std::stoi(a.at("h_v"));
    const auto [tokens, seqs] = anchor_tokens_and_seqs(a.at("seqlens"));
    SCOPED_TRACE(p.name + " vs anchor " + a.at("model") + " " + a.at("seqlens"));
    EXPECT_EQ(p.h_qk, h_qk);
    EXPECT_EQ(p.h_v, h_v);
    EXPECT_EQ(p.k, 128);
    EXPECT_EQ(p.v, 128);
    EXPECT_EQ(p.total_tokens(), tokens);
    EXPECT_EQ(p.num_seqs(), seqs);
    EXPECT_EQ(p.layout, gdn::problems::Layout::Packed);  // the anchors always pass cu_seqlens
    EXPECT_EQ(p.tag, a.at("model"));
    head_configs.insert({h_qk, h_v});
    layouts.insert(a.at("seqlens"));
    anchor_total += tokens;
    set_total += p.total_tokens();
  }
  EXPECT_EQ(head_configs.size(), 9u);
  EXPECT_EQ(layouts.size(), 19u);
  EXPECT_EQ(set_total, anchor_total);
}

TEST(ShapeSetFiles, BackwardAnchorsAreThePublishedTable) {
  const ShapeSet set = load_shape_set("bwd_anchors");
  const auto anchors = read_anchor_csv(kRoot / "bench/anchors/flashqla_h200_bwd.csv");
  ASSERT_EQ(anchors.size(), 32u);
  ASSERT_EQ(set.problems.size(), 32u);
  for (size_t i = 0; i < anchors.size(); ++i) {
    const auto& a = anchors[i];
    const auto& p = set.problems[i];
    SCOPED_TRACE(p.name + " vs anchor " + a.at("model") + " " + a.at("seqlens"));
    const std::string layout = a.at("seqlens");  // "32k_4seq"
    const int64_t tokens = std::stoll(layout.substr(0, layout.find('k'))) * 1024;
    EXPECT_EQ(p.h_qk, std::stoi(a.at("h_qk")));
    EXPECT_EQ(p.h_v, std::stoi(a.at("h_v")));
    EXPECT_EQ(p.total_tokens(), tokens);
    EXPECT_EQ(p.num_seqs(), std::stoll(a.at("num_seqs")));
    EXPECT_GT(*std::min_element(p.seqlens.begin(), p.seqlens.end()), 0);  // a split, no empties
  }
}

TEST(ShapeSetFiles, EdgeSetCoversTheCorrectnessStandard) {
  const ShapeSet set = load_shape_set("edge");
  std::set<int64_t> batched_lengths, packed_lengths;
  std::set<int> ratios;
  bool batch_above_one = false, no_tokens = false;
  for (const auto& p : set.problems) {
    ratios.insert(p.h_v / p.h_qk);
    auto& lengths = p.layout == gdn::problems::Layout::Batched ? batched_lengths : packed_lengths;
    lengths.insert(p.seqlens.begin(), p.seqlens.end());
    batch_above_one |= p.batch() > 1;
    no_tokens |= p.total_tokens() == 0;
  }
  for (int64_t t : {1, 63, 65, 1000}) EXPECT_TRUE(batched_lengths.count(t)) << "T = " << t;
  for (int64_t len : {0, 1, 64}) EXPECT_TRUE(packed_lengths.count(len)) << "length " << len;
  EXPECT_EQ(ratios, (std::set<int>{1, 2, 3, 4, 6, 8}));
  EXPECT_TRUE(batch_above_one);
  EXPECT_TRUE(no_tokens);
}

TEST(ApiProblem, PackedProblemCarriesOffsetsAndHint) {
  const ShapeSet set = load_shape_set("edge");
  const auto* p = set.find("packed_64_0_1");
  ASSERT_NE(p, nullptr);
  gdn::problems::ApiProblem api = gdn::problems::to_api_problem(*p);
  EXPECT_EQ(api.problem.B, 1);
  EXPECT_EQ(api.problem.T, 65);
  EXPECT_EQ(api.problem.num_seqs, 3);
  EXPECT_EQ(api.problem.Hk, 2);
  EXPECT_EQ(api.problem.Hv, 4);
  EXPECT_EQ(api.problem.max_seqlen_hint, 64);
  EXPECT_EQ(api.problem.cu_seqlens, nullptr);  // the device copy is the caller's
  ASSERT_EQ(api.problem.cu_seqlens_dtype, GDN_INT32);
  ASSERT_EQ(api.cu_seqlens_bytes(), 4 * sizeof(int32_t));
  const auto* offsets = static_cast<const int32_t*>(api.cu_seqlens_host());
  EXPECT_EQ(std::vector<int32_t>(offsets, offsets + 4), (std::vector<int32_t>{0, 64, 64, 65}));

  // Moving keeps the host pointer valid (it points into the moved buffers).
  gdn::problems::ApiProblem moved = std::move(api);
  EXPECT_EQ(static_cast<const int32_t*>(moved.cu_seqlens_host())[3], 65);

  gdn::problems::ApiProblem wide = gdn::problems::to_api_problem(*p, GDN_INT64, GDN_STATE_VK);
  EXPECT_EQ(wide.problem.cu_seqlens_dtype, GDN_INT64);
  EXPECT_EQ(wide.problem.state_layout, GDN_STATE_VK);
  EXPECT_EQ(static_cast<const int64_t*>(wide.cu_seqlens_host())[2], 64);
  EXPECT_EQ(wide.cu_seqlens_bytes(), 4 * sizeof(int64_t));
}

TEST(ApiProblem, BatchedProblemHasNoOffsets) {
  const ShapeSet set = load_shape_set("edge");
  const auto* p = set.find("t65_b3");
  ASSERT_NE(p, nullptr);
  const gdn::problems::ApiProblem api = gdn::problems::to_api_problem(*p);
  EXPECT_EQ(api.problem.B, 3);
  EXPECT_EQ(api.problem.T, 65);
  EXPECT_EQ(api.problem.num_seqs, 3);
  EXPECT_EQ(api.cu_seqlens_host(), nullptr);
  EXPECT_EQ(api.cu_seqlens_bytes(), 0u);
  EXPECT_EQ(gdn_validate_problem(&api.problem), GDN_OK) << gdn_last_error();
}

TEST(ApiProblem, ChoosesInt64OffsetsBeyondInt32) {
  gdn::problems::Problem huge;
  huge.name = "huge";
  huge.h_qk = huge.h_v = 1;
  huge.k = huge.v = 128;
  huge.seqlens = {int64_t{1} << 31, 5};
  const gdn::problems::ApiProblem api = gdn::problems::to_api_problem(huge);
  EXPECT_EQ(api.problem.cu_seqlens_dtype, GDN_INT64);
  EXPECT_EQ(static_cast<const int64_t*>(api.cu_seqlens_host())[2], (int64_t{1} << 31) + 5);
}

}  // namespace

namespace {

// The message of loading `path`, "" when it loads.
std::string load_error(const std::string& path) {
  try {
    load_shape_set(path);
  } catch (const ShapeSetError& e) {
    return e.what();
  }
  return "";
}

struct ScratchDir {
  fs::path path = fs::temp_directory_path() / ("gdn_shapes_" + std::to_string(::getpid()));
  ScratchDir() { fs::create_directories(path); }
  ~ScratchDir() { fs::remove_all(path); }
};

}  // namespace

// Files that are not a shape set get a message saying what they are, not a parse error about
// a missing header; /dev/zero is refused instead of read until memory runs out.
TEST(ShapeSetFiles, NonRegularAndOversizedFilesAreRefusedClearly) {
  ScratchDir scratch;
  const std::string as_dir = (scratch.path / "sets.csv").string();
  fs::create_directories(as_dir);
  EXPECT_NE(load_error(as_dir).find("is a directory; expected a .csv file"), std::string::npos) << load_error(as_dir);
  EXPECT_NE(load_error("/dev/zero").find("is not a regular file"), std::string::npos) << load_error("/dev/zero");
  const std::string big = (scratch.path / "big.csv").string();
  {
    std::ofstream out(big);
    out << "name,h_qk,h_v,k,v,dtype,layout,seqlens,tag\n";
    out << std::string(gdn::problems::kMaxShapeSetBytes, '#') << '\n';
  }
  EXPECT_NE(load_error(big).find("a shape set is at most 1048576 bytes"), std::string::npos) << load_error(big);
}

// A UTF-8 byte order mark (spreadsheet exports write one) is not part of the header.
TEST(ShapeSetFiles, AByteOrderMarkIsAccepted) {
  ScratchDir scratch;
  const std::string path = (scratch.path / "bom.csv").string();
  std::ofstream(path) << "\xEF\xBB\xBFname,h_qk,h_v,k,v,dtype,layout,seqlens,tag\none,1,1,128,128,bf16,packed,64,x\n";
  const ShapeSet set = load_shape_set(path);
  ASSERT_EQ(set.problems.size(), 1u);
  EXPECT_EQ(set.problems[0].name, "one");
}
