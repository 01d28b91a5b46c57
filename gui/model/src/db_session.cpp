#include "gdn/gui/model/db_session.hpp"

#include <utility>

namespace gdn::gui::model {

DbSession::DbSession(std::string path, double poll_interval_s)
    : path_(std::move(path)), interval_s_(poll_interval_s) {}

SessionProblem describe_db_error(const std::string& path, const std::exception& error) {
  using Kind = db::DbError::Kind;
  const auto* dbe = dynamic_cast<const db::DbError*>(&error);
  const Kind kind = dbe ? dbe->kind() : Kind::Other;
  SessionProblem p;
  p.detail = error.what();
  switch (kind) {
    case Kind::Missing:
      p.headline = "No database at " + path;
      p.detail += "\nCheck the --db path. A sweep that is about to start will create it: the "
                  "dashboard keeps looking.";
      break;
    case Kind::NotADatabase:
      p.headline = "Not a readable SQLite database: " + path;
      p.detail += "\nThe file is corrupt or not SQLite. Open a results database written by "
                  "gdnlab sweep.";
      break;
    case Kind::ForeignSchema:
      p.headline = "Not a gdnlab results database: " + path;
      p.detail += "\nThis SQLite file belongs to another application.";
      break;
    case Kind::TooNew:
      p.headline = "Written by a newer gdnlab: " + path;
      p.detail += "\nUpdate this build of gdnlab to read it.";
      break;
    case Kind::NeedsMigration:
      p.headline = "Older schema, not migrated: " + path;
      p.detail += "\nThe dashboard opens read-only; run any gdnlab command that writes (e.g. "
                  "gdnlab sweep --resume) to migrate it.";
      break;
    case Kind::Locked:
      p.headline = "Database is locked by another process: " + path;
      p.detail += "\nRetrying automatically.";
      break;
    default:
      p.headline = "Cannot read " + path;
      break;
  }
  return p;
}

void DbSession::try_open(double now_s) {
  next_check_s_ = now_s + interval_s_;
  try {
    db::OpenOptions options = db::kReadExisting;
    // Short: the frame loop waits on this; a lock held longer is shown and retried.
    options.busy_timeout_ms = 100;
    db_.emplace(db::Database::open(path_, options));
    last_counter_ = db_->change_counter();
    problem_.reset();
  } catch (const std::exception& e) {
    db_.reset();
    problem_ = describe_db_error(path_, e);
  }
}

bool DbSession::poll(double now_s) {
  if (now_s < next_check_s_) return false;
  if (!db_) {
    try_open(now_s);
    return db_.has_value();
  }
  next_check_s_ = now_s + interval_s_;
  try {
    const std::int64_t counter = db_->change_counter();
    if (counter == last_counter_) return false;
    last_counter_ = counter;
    return true;
  } catch (const std::exception& e) {
    fail(e);
    return false;
  }
}

void DbSession::fail(const std::exception& error) {
  db_.reset();
  problem_ = describe_db_error(path_, error);
}

db::Database DbSession::open_for_writing() const {
  db::OpenOptions options;
  options.create_if_missing = false;
  options.busy_timeout_ms = 2000;
  return db::Database::open(path_, options);
}

}  // namespace gdn::gui::model
