// Private to db/src: the SQL expression of each Field over the aliases the results query uses
// (r = results, vr = variants, p = problems).
#pragma once

#include <string_view>

#include "gdn/db/model.hpp"

namespace gdn::db {

std::string_view field_sql(Field f);

}  // namespace gdn::db
