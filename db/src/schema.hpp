// Private to db/src: the schema, as a list of migrations indexed by the version they produce.
#pragma once

#include "gdn/db/database.hpp"

namespace gdn::db {

// Applies migrations (from, to] in order, each in its own transaction that also stamps
// PRAGMA user_version (and application_id on the first), so an interrupted migration leaves
// the file at the last complete version.
void migrate(Database& db, int from_version, int to_version);

// For a file read as it is at an older `version` (read-only): temporary views that present
// the current schema's columns over its tables.
void add_compat_views(Database& db, int version);

}  // namespace gdn::db
