// Text renderings of a sweep for `gdnlab report`: the CLI only parses arguments and prints.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "gdn/db/database.hpp"

namespace gdn::db {

enum class ReportFormat : std::uint8_t { Table, Csv, Json };
std::optional<ReportFormat> parse_report_format(std::string_view text);  // table|csv|json

// Sweep header (device, build, protocol, status), outcome counts, then one row per (problem,
// pass): best variant, p20/p50/p80, spread, runner-up and margin, clock, CUPTI metrics (empty
// when NULL, with the reason in JSON), registers/shared/spills. Sweep defaults to the newest.
// Throws DbError::Invalid when there is no such sweep (or no sweep at all).
std::string render_report(const Database& db, std::optional<std::int64_t> sweep_id,
                          ReportFormat format);

}  // namespace gdn::db
