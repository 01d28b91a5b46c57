// JSON and CSV spellings of field values (see field_text.hpp).
#include "field_text.hpp"

#include "gdn/text/number.hpp"

namespace gdn::db {

text::Json field_json(const FieldValue& v) {
  if (const auto* i = std::get_if<std::int64_t>(&v)) return *i;
  if (const auto* d = std::get_if<double>(&v)) return text::json_number(*d);
  if (const auto* s = std::get_if<std::string>(&v)) return *s;
  return nullptr;
}

std::string exact_text(const FieldValue& v) {
  if (const auto* d = std::get_if<double>(&v)) return text::shortest(*d);
  return format_value(v);
}

std::string csv_field(std::string_view text) {
  if (text.find_first_of(",\"\n\r") == std::string_view::npos) return std::string(text);
  std::string out = "\"";
  for (const char ch : text) {
    if (ch == '"') out += '"';
    out += ch;
  }
  return out + "\"";
}

std::string sweep_line(const SweepSummary& s) {
  const std::string partial =
      s.sweep.status == SweepStatus::Finished ? "" : ", PARTIAL: " + std::string(to_string(s.sweep.status));
  return "sweep " + std::to_string(s.sweep.id) + " (shapes '" + s.sweep.shapes + "', started " +
         s.sweep.started_at + partial + ") on " + s.device.name + " (" + s.device.uuid + ", driver " +
         s.device.driver_version + "), build git " + s.build.git_sha + " (variant set '" +
         s.build.variant_set + "')";
}

text::Json sweep_json(const SweepSummary& s) {
  return {{"id", s.sweep.id},
          {"status", to_string(s.sweep.status)},
          {"shapes", s.sweep.shapes},
          {"space", s.sweep.space},
          {"started_at", s.sweep.started_at},
          {"device", s.device.name},
          {"device_uuid", s.device.uuid},
          {"driver", s.device.driver_version},
          {"cuda", s.device.cuda_version},
          {"git_sha", s.build.git_sha},
          {"variant_set", s.build.variant_set}};
}

}  // namespace gdn::db
