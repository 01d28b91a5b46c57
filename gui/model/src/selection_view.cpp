#include "gdn/gui/model/selection_view.hpp"

namespace gdn::gui::model {

void SelectionView::refresh(const db::Database& db, std::int64_t sweep_id) {
  sweep_id_ = sweep_id;
  selection_.reset();
  json_.clear();
  header_.clear();
  if (sweep_id == 0) return;
  selection_ = db::select_winners(db, sweep_id);
  if (!selection_->buckets.empty()) {
    json_ = db::render_dispatch_json(*selection_);
    header_ = db::render_dispatch_header(*selection_);
  }
}

ActionResult SelectionView::set_override(const DbSession& session, std::size_t bucket_index,
                                         const std::string& variant, const std::string& reason) {
  if (!selection_ || bucket_index >= selection_->buckets.size())
    return {false, "no bucket selected"};
  const auto key = selection_->buckets[bucket_index].key;
  try {
    db::Database writable = session.open_for_writing();
    db::set_override(writable, sweep_id_, key, variant, reason);
  } catch (const std::exception& e) {
    return {false, std::string("override not saved: ") + e.what()};
  }
  return {true, "override saved: " + variant + " for " + db::describe_bucket(key)};
}

ActionResult SelectionView::clear_override(const DbSession& session, std::size_t bucket_index) {
  if (!selection_ || bucket_index >= selection_->buckets.size())
    return {false, "no bucket selected"};
  const auto key = selection_->buckets[bucket_index].key;
  bool removed = false;
  try {
    db::Database writable = session.open_for_writing();
    removed = db::clear_override(writable, sweep_id_, key);
  } catch (const std::exception& e) {
    return {false, std::string("override not cleared: ") + e.what()};
  }
  return {true, removed ? "override cleared for " + db::describe_bucket(key)
                        : "that bucket had no override"};
}

ActionResult SelectionView::export_to(const DbSession& session,
                                      const std::filesystem::path& out_dir) const {
  if (!session.is_open()) return {false, "no database open"};
  if (sweep_id_ == 0) return {false, "no sweep selected"};
  try {
    db::ExportOptions options;
    options.sweep_id = sweep_id_;
    options.out_dir = out_dir;
    // The sweep the user picked, its status on screen: an unfinished one is exported marked
    // partial (in dispatch.json and the header), as `gdnlab export --allow-partial` does.
    options.allow_partial = true;
    const db::ExportResult result = db::export_dispatch(session.db(), options);
    return {true, "wrote " + result.json_path.string() + " and " + result.header_path.string() +
                      " (" + std::to_string(result.selection.buckets.size()) + " buckets)"};
  } catch (const std::exception& e) {
    return {false, std::string("export failed: ") + e.what()};
  }
}

}  // namespace gdn::gui::model
