#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "gdn/profiler/protocol.hpp"

namespace gp = gdn::profiler;

namespace {
// The validation message of a protocol, or "" when it is valid.
std::string rejection(const gp::Protocol& p) {
  try {
    gp::validate(p);
    return "";
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
}
void expect_mentions(const std::string& message, const std::string& part) {
  EXPECT_NE(message.find(part), std::string::npos) << "message: '" << message << "' lacks '" << part << "'";
}
}  // namespace

TEST(ProtocolValidation, DefaultsAndPresetsAreValid) {
  EXPECT_EQ(rejection(gp::Protocol{}), "");
  EXPECT_EQ(rejection(gp::Protocol::quick()), "");
  EXPECT_EQ(rejection(gp::Protocol::precise()), "");
  EXPECT_LT(gp::Protocol::quick().max_samples, gp::Protocol::precise().max_samples);
}

TEST(ProtocolValidation, EachRuleNamesFieldExpectationAndValue) {
  gp::Protocol p;
  p.warmup_calls = -1;
  std::string m = rejection(p);
  expect_mentions(m, "Protocol.warmup_calls");
  expect_mentions(m, ">= 0");
  expect_mentions(m, "got -1");

  p = {};
  p.min_samples = 0;
  m = rejection(p);
  expect_mentions(m, "Protocol.min_samples");
  expect_mentions(m, "got 0");

  p = {};
  p.min_samples = 30;
  p.max_samples = 10;
  m = rejection(p);
  expect_mentions(m, "Protocol.max_samples");
  expect_mentions(m, "min_samples (30)");
  expect_mentions(m, "got 10");

  p = {};
  p.target_rel_spread = 0.0;
  expect_mentions(rejection(p), "Protocol.target_rel_spread");
  p.target_rel_spread = std::nan("");
  expect_mentions(rejection(p), "Protocol.target_rel_spread");

  p = {};
  p.time_cap_ms = -5;
  m = rejection(p);
  expect_mentions(m, "Protocol.time_cap_ms");
  expect_mentions(m, "got -5");

  p = {};
  p.graph_replays_per_sample = 0;
  expect_mentions(rejection(p), "Protocol.graph_replays_per_sample");

  p = {};
  p.source = static_cast<gp::TimingSource>(7);
  expect_mentions(rejection(p), "Protocol.source");
}

TEST(ProtocolValidation, FlushBufferMustCoverTheL2) {
  gp::Protocol p;
  const std::size_t l2 = 50u << 20;
  EXPECT_NO_THROW(gp::validate_for_device(p, l2));  // 0 = automatic
  p.l2_flush_bytes = l2 - 1;
  try {
    gp::validate_for_device(p, l2);
    FAIL() << "a flush buffer smaller than the L2 was accepted";
  } catch (const std::invalid_argument& e) {
    expect_mentions(e.what(), "Protocol.l2_flush_bytes");
    expect_mentions(e.what(), std::to_string(l2));
    expect_mentions(e.what(), "got " + std::to_string(l2 - 1));
  }
  p.defeat_l2 = false;  // irrelevant when the L2 is not defeated
  EXPECT_NO_THROW(gp::validate_for_device(p, l2));
}

TEST(ProtocolValidation, ResolvedFlushBytes) {
  gp::Protocol p;
  EXPECT_EQ(gp::resolved_flush_bytes(p, 1000), 2000u);
  p.l2_flush_bytes = 4096;
  EXPECT_EQ(gp::resolved_flush_bytes(p, 1000), 4096u);
  p.defeat_l2 = false;
  EXPECT_EQ(gp::resolved_flush_bytes(p, 1000), 0u);
}

TEST(ProtocolJson, RoundTripsEveryField) {
  gp::Protocol p;
  p.warmup_calls = 3;
  p.min_samples = 7;
  p.max_samples = 77;
  p.target_rel_spread = 0.0123;
  p.time_cap_ms = 1234.5;
  p.defeat_l2 = false;
  p.l2_flush_bytes = 123456789;
  p.use_graphs = false;
  p.source = gp::TimingSource::GraphReplay;
  p.graph_replays_per_sample = 4;
  const std::string json = gp::to_json(p);
  EXPECT_EQ(gp::protocol_from_json(json), p) << json;
  EXPECT_EQ(gp::protocol_from_json(gp::to_json(gp::Protocol{})), gp::Protocol{});
}

TEST(ProtocolJson, IsStableText) {
  EXPECT_EQ(gp::to_json(gp::Protocol{}),
            "{\"warmup_calls\":10,\"min_samples\":20,\"max_samples\":500,\"target_rel_spread\":0.005,"
            "\"time_cap_ms\":3000.0,\"defeat_l2\":true,\"l2_flush_bytes\":0,\"use_graphs\":true,"
            "\"source\":\"cupti\",\"graph_replays_per_sample\":1}");
}

TEST(ProtocolJson, AcceptsAnyOrderWhitespaceAndMissingKeys) {
  const gp::Protocol p = gp::protocol_from_json(" { \"source\" : \"graph\" , \"min_samples\": 3 } ");
  EXPECT_EQ(p.source, gp::TimingSource::GraphReplay);
  EXPECT_EQ(p.min_samples, 3);
  EXPECT_EQ(p.max_samples, gp::Protocol{}.max_samples);
}

TEST(ProtocolJson, RejectsWithTheKeyNamed) {
  auto message = [](const std::string& json) {
    try {
      gp::protocol_from_json(json);
      return std::string();
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
  };
  expect_mentions(message("{\"warmup\":1}"), "unknown key 'warmup'");
  expect_mentions(message("{\"min_samples\":\"x\"}"), "key 'min_samples'");
  expect_mentions(message("{\"min_samples\":2.5}"), "key 'min_samples'");
  expect_mentions(message("{\"defeat_l2\":1}"), "true or false");
  expect_mentions(message("{\"time_cap_ms\":nan}"), "not valid JSON");
  expect_mentions(message("{\"source\":\"events\"}"), "'cupti' or 'graph'");
  expect_mentions(message("{\"min_samples\":1,\"min_samples\":2}"), "duplicate key");
  expect_mentions(message("[1]"), "expected an object");
  expect_mentions(message("{\"min_samples\":1} x"), "not valid JSON");
  // Parsed but invalid as a protocol: the validation message comes through.
  expect_mentions(message("{\"min_samples\":50,\"max_samples\":10}"), "Protocol.max_samples");
}

TEST(TimingSourceNames, ParseAndPrint) {
  EXPECT_EQ(gp::parse_timing_source("cupti"), gp::TimingSource::CuptiActivity);
  EXPECT_EQ(gp::parse_timing_source("graph"), gp::TimingSource::GraphReplay);
  EXPECT_EQ(gp::to_string(gp::TimingSource::GraphReplay), "graph");
  EXPECT_THROW(gp::parse_timing_source("CUPTI"), std::invalid_argument);
}
