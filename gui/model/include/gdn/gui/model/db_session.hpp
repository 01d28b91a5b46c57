// The dashboard's connection to one results database: opened read-only (the dashboard never
// migrates or writes someone else's file behind their back), reopened after failures, and
// polled cheaply for changes while a sweep writes to it. A missing, locked, corrupt or
// foreign file is a state with a message, never an exception out of the frame loop.
#pragma once

#include <cstdint>
#include <exception>
#include <optional>
#include <string>

#include "gdn/db/database.hpp"

namespace gdn::gui::model {

struct SessionProblem {
  std::string headline;  // "No database at build/x.db"
  std::string detail;    // the DbError text and what to do
};

class DbSession {
 public:
  // poll_interval_s: how often to look for changes (and to retry a failed open).
  DbSession(std::string path, double poll_interval_s);

  // Call once per frame with a monotonic time in seconds. Opens the file when due and checks
  // the change counter at most every poll interval. Returns true when the data a view shows
  // may have changed: first successful open, a write by another connection, a reopen.
  bool poll(double now_s);

  bool is_open() const { return db_.has_value(); }
  const db::Database& db() const { return *db_; }  // only while is_open()
  const std::string& path() const { return path_; }
  const std::optional<SessionProblem>& problem() const { return problem_; }

  // Views report a database error met while querying: the connection is closed, the message
  // shown, and the open retried after the poll interval.
  void fail(const std::exception& error);

  // Overrides are written through a short-lived read-write connection (the session itself
  // stays read-only). Throws db::DbError as Database::open does.
  db::Database open_for_writing() const;

 private:
  void try_open(double now_s);

  std::string path_;
  double interval_s_;
  std::optional<db::Database> db_;
  std::optional<SessionProblem> problem_;
  double next_check_s_ = 0;
  std::int64_t last_counter_ = -1;
};

// Headline + advice for a database error, by kind (tests check every kind has one).
SessionProblem describe_db_error(const std::string& path, const std::exception& error);

}  // namespace gdn::gui::model
