// Checks of a results database before its numbers are used again: replayed as a recording,
// exported as a dispatch table or reported. A corrupt file or an impossible measurement is
// refused with what is wrong and where, instead of turning into rows or tables of absurd values.
#pragma once

#include <cstdint>

#include "gdn/db/database.hpp"

namespace gdn::db {

// Throws DbError::NotADatabase when SQLite's PRAGMA quick_check finds the file damaged, and
// DbError::Invalid naming the result when a Passed result of `sweep_id` has no p50, a
// percentile <= 0 or not finite, or percentiles out of order (p20 <= p50 <= p80 is required).
void check_sweep_results(const Database& db, std::int64_t sweep_id);

}  // namespace gdn::db
