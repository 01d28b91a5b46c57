// Maps errors to exit statuses (see exit_status.hpp).
#include "exit_status.hpp"

#include <stdexcept>

#include "gdn/db/database.hpp"
#include "gdn/tuner/sweep.hpp"

namespace gdn::cli {

int exit_status_of(const std::exception& e) {
  if (const auto* stop = dynamic_cast<const tuner::SweepStopped*>(&e)) return kExitSignalBase + stop->signal();
  if (dynamic_cast<const tuner::RecordingError*>(&e)) return kExitFailure;
  if (dynamic_cast<const std::invalid_argument*>(&e)) return kExitUsage;
  if (const auto* db = dynamic_cast<const db::DbError*>(&e)) {
    switch (db->kind()) {
      case db::DbError::Kind::Missing:
      case db::DbError::Kind::NotADatabase:
      case db::DbError::Kind::ForeignSchema:
      case db::DbError::Kind::TooNew:
      case db::DbError::Kind::NeedsMigration:
      case db::DbError::Kind::Invalid:
        return kExitUsage;  // the input named on the command line is not usable
      case db::DbError::Kind::Locked:
      case db::DbError::Kind::Constraint:
      case db::DbError::Kind::Io:
      case db::DbError::Kind::Other:
        return kExitFailure;
    }
  }
  return kExitFailure;
}

}  // namespace gdn::cli
