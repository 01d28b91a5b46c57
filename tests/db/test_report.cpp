// `gdnlab report` renderings: table, CSV, JSON.
#include <nlohmann/json.hpp>

#include "gdn/db/report.hpp"
#include "scenario.hpp"

namespace gdn::db::test {
namespace {

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = text.find('\n', start);
    out.push_back(text.substr(start, end - start));
    start = end == std::string::npos ? text.size() : end + 1;
  }
  return out;
}

struct ReportTest : ::testing::Test {
  ScratchDir dir;
  Database db = Database::open(dir.file("r.db"));
  Scenario sc = write_scenario(db);
};

TEST_F(ReportTest, TableHasProvenanceCountsAndOneRowPerProblem) {
  const std::string t = render_report(db, std::nullopt, ReportFormat::Table);
  EXPECT_NE(t.find("device NVIDIA H200 (GPU-0000-test), 132 SMs"), std::string::npos) << t;
  EXPECT_NE(t.find("outcomes: Passed 13 Incorrect 3 CompileRejected 0 LaunchFailed 1 Timeout 1 Unsupported 1 Crashed 1 (total 20)"),
            std::string::npos) << t;
  EXPECT_NE(t.find("graphs on"), std::string::npos);
  const auto ls = lines(t);
  ASSERT_GE(ls.size(), 6u);
  const std::string& header = ls[ls.size() - 6];
  EXPECT_EQ(header.rfind("shape set", 0), 0u) << header;
  EXPECT_NE(header.find("SM busy %"), std::string::npos);
  EXPECT_NE(ls[ls.size() - 5].find("gdn_fwd_A"), std::string::npos);
  EXPECT_NE(ls[ls.size() - 3].find("gdn_fwd_B"), std::string::npos);
}

TEST_F(ReportTest, CsvHasAHeaderAndFiveRows) {
  const auto ls = lines(render_report(db, sc.sweep, ReportFormat::Csv));
  ASSERT_EQ(ls.size(), 6u);
  EXPECT_EQ(ls[0].rfind("shape_set,row,pass,h_qk,h_v,k,v,dtype,num_seqs,total_tokens,max_seqlen,variant,latency_p20_ms,latency_p50_ms", 0), 0u) << ls[0];
  EXPECT_EQ(ls[1].rfind("test,0,fwd,16,32,128,128,bf16,1,4096,4096,gdn_fwd_A,0.99,1,1.01,0.02,gdn_fwd_B,0.1,3,1,", 0), 0u) << ls[1];
}

TEST_F(ReportTest, JsonCarriesNullsAndReasons) {
  const std::string j = render_report(db, sc.sweep, ReportFormat::Json);
  const auto doc = nlohmann::json::parse(j);
  EXPECT_EQ(doc["outcomes"]["Passed"], 13) << j;
  bool c_best = false, null_dram = false, null_margin = false, p50_of_8 = false;
  for (const auto& row : doc["problems"]) {
    c_best |= row["variant"] == "gdn_fwd_C";
    null_dram |= row["dram_pct"].is_null();
    null_margin |= row["margin"].is_null();
    p50_of_8 |= row["latency_p50_ms"] == 8.0;
  }
  EXPECT_TRUE(c_best && null_dram && null_margin && p50_of_8) << j;
}

TEST_F(ReportTest, BadArguments) {
  EXPECT_EQ(parse_report_format("json"), ReportFormat::Json);
  EXPECT_FALSE(parse_report_format("xml").has_value());
  EXPECT_THROW(render_report(db, 99, ReportFormat::Table), DbError);
  ScratchDir empty_dir;
  Database empty = Database::open(empty_dir.file("e.db"));
  try {
    render_report(empty, std::nullopt, ReportFormat::Table);
    FAIL();
  } catch (const DbError& e) {
    EXPECT_NE(std::string(e.what()).find("holds no sweep yet"), std::string::npos);
  }
}

}  // namespace
}  // namespace gdn::db::test
