// How the lab spells numbers, through {fmt}: every report, export, wire message and stored
// argument string uses these, so one value reads the same everywhere.
#pragma once

#include <string>

namespace gdn::text {

// The shortest text that reads back as the same double: "0.005", "120", "1e+16" (not %.17g's
// "0.0050000000000000001"). Non-finite values spell as "nan", "inf", "-inf".
std::string shortest(double value);

// At most `digits` significant digits, for people ("0.1235", "1.235e+05"; printf's %g).
std::string significant(double value, int digits);

// A fixed number of decimals, for people ("12.35").
std::string fixed(double value, int decimals);

}  // namespace gdn::text
