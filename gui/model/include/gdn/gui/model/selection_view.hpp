// The selection & export panel's model: the winners per shape bucket of one sweep (the rule of
// gdn/db/selection.hpp), previews of the dispatch files, overrides, and the export itself, all
// through the db library so `gdnlab export` and the dashboard produce identical files.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "gdn/db/export.hpp"
#include "gdn/db/selection.hpp"
#include "gdn/gui/model/db_session.hpp"

namespace gdn::gui::model {

// What an action did, for the status line under the buttons.
struct ActionResult {
  bool ok = false;
  std::string message;
};

class SelectionView {
 public:
  // Recomputes the selection of `sweep_id` (0: clears it). Database errors propagate (the
  // dashboard hands them to DbSession::fail); a sweep with nothing selectable is not an error:
  // it gives an empty selection and its skipped buckets.
  void refresh(const db::Database& db, std::int64_t sweep_id);

  const std::optional<db::Selection>& selection() const { return selection_; }
  std::int64_t sweep_id() const { return sweep_id_; }
  // The exact file contents an export would write now (empty without a selection).
  const std::string& preview_json() const { return json_; }
  const std::string& preview_header() const { return header_; }

  // Overrides go through a separate read-write connection; call refresh() afterwards to see
  // the new choice. Errors (read-only file, ineligible variant, empty reason) come back as
  // messages, never as exceptions.
  ActionResult set_override(const DbSession& session, std::size_t bucket_index,
                            const std::string& variant, const std::string& reason);
  ActionResult clear_override(const DbSession& session, std::size_t bucket_index);

  // db::export_dispatch into out_dir; the message lists the two files written.
  ActionResult export_to(const DbSession& session, const std::filesystem::path& out_dir) const;

 private:
  std::int64_t sweep_id_ = 0;
  std::optional<db::Selection> selection_;
  std::string json_, header_;
};

}  // namespace gdn::gui::model
