// One child process speaking the line protocol over its stdin/stdout (stderr is inherited, so
// a worker's diagnostics reach the terminal). POSIX only: fork + execv, pipes, poll, SIGKILL.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace gdn::tuner {

class WorkerProcess {
 public:
  explicit WorkerProcess(std::vector<std::string> argv);
  ~WorkerProcess();  // kills a still-running child
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  // Throws std::runtime_error when the pipes or the fork fail (exec failure shows up as the
  // child exiting with status 127 before it says anything).
  void start();
  bool running() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }
  int output_fd() const { return out_fd_; }

  // Writes one line (LF appended). False when the child has gone (EPIPE).
  bool send_line(const std::string& line);

  enum class ReadStatus { Line, Closed, TimedOut };
  // Blocks until a full line arrives, the child closes its stdout, or the deadline passes.
  ReadStatus read_line(std::string& line, std::chrono::steady_clock::time_point deadline);
  // Non-blocking: pulls what is readable into the buffer; then a complete line is returned via
  // take_line. Returns false on EOF/error.
  bool pump();
  std::optional<std::string> take_line();

  // SIGKILL (if still running) and reap. Returns how the child ended, in words
  // ("killed by signal 11 (Segmentation fault)", "exited with status 3").
  std::string kill_and_reap();
  // Reap after EOF: waits up to `grace` for the child to exit, then kills it.
  std::string reap(std::chrono::milliseconds grace);

 private:
  std::string describe_status(int status) const;
  std::vector<std::string> argv_;
  pid_t pid_ = -1;
  int in_fd_ = -1;   // our end of the child's stdin
  int out_fd_ = -1;  // our end of the child's stdout
  std::string buffer_;
};

// Absolute path of the running executable (/proc/self/exe), for spawning `gdnlab worker`.
std::string self_executable();

}  // namespace gdn::tuner
