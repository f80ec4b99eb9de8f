#include "web/export_jobs.h"

#include <algorithm>

#include "base/name_table.h"

namespace kanon::web {

const char* to_string(JobState state) {
  static const base::NameTable<JobState> kNames{{JobState::kRunning, "running"},
                                                {JobState::kDone, "done"},
                                                {JobState::kFailed, "failed"},
                                                {JobState::kCancelled, "cancelled"}};
  return kNames.name(state);
}

ExportJobs::~ExportJobs() {
  std::vector<std::thread> threads;
  {
    const std::lock_guard lock(mu_);
    for (auto& job : jobs_) {
      job->channel.cancel();
      if (job->thread.joinable()) threads.push_back(std::move(job->thread));
    }
  }
  for (auto& t : threads) t.join();
}

void ExportJobs::collect(Job& job) {
  for (auto& n : job.channel.take_notice_texts()) job.view.notices.push_back(std::move(n));
  if (job.view.state == JobState::kRunning)
    job.view.progress = std::clamp(job.channel.progress(), 0.0, 1.0);
}

std::optional<uint64_t> ExportJobs::start(const std::string& user, const std::string& table,
                                          const std::string& command) {
  const std::lock_guard lock(mu_);
  const auto running = std::count_if(jobs_.begin(), jobs_.end(), [](const auto& j) {
    return j->view.state == JobState::kRunning;
  });
  if (static_cast<size_t>(running) >= max_running_) return std::nullopt;
  // Forget the oldest finished jobs beyond `keep` (their threads are over).
  for (auto it = jobs_.begin(); jobs_.size() >= keep_ + max_running_ && it != jobs_.end();) {
    if ((*it)->view.state == JobState::kRunning) {
      ++it;
      continue;
    }
    if ((*it)->thread.joinable()) (*it)->thread.join();
    it = jobs_.erase(it);
  }
  auto job = std::make_unique<Job>();
  job->view.id = next_id_++;
  job->view.user = user;
  job->view.table = table;
  job->view.command = command;
  Job& ref = *job;
  jobs_.push_back(std::move(job));
  ref.thread = std::thread([this, &ref] { run(ref); });
  return ref.view.id;
}

void ExportJobs::run(Job& job) {
  proxy::AdminConsole console(context_);
  proxy::ConsoleAnswer answer = console.answer(job.view.command, job.channel);
  const std::lock_guard lock(mu_);
  collect(job);
  if (answer.ok()) {
    job.view.state = JobState::kDone;
    job.view.progress = 1;
    if (!answer.results.empty()) job.view.result = std::move(answer.results.front());
  } else {
    job.view.state = answer.sqlstate == "57014" ? JobState::kCancelled : JobState::kFailed;
    job.view.sqlstate = answer.sqlstate;
    job.view.error = answer.error;
  }
}

bool ExportJobs::cancel(uint64_t id) {
  const std::lock_guard lock(mu_);
  for (auto& job : jobs_)
    if (job->view.id == id && job->view.state == JobState::kRunning) {
      job->channel.cancel();
      return true;
    }
  return false;
}

std::vector<JobView> ExportJobs::list() const {
  const std::lock_guard lock(mu_);
  std::vector<JobView> out;
  for (const auto& job : jobs_) {
    collect(*job);
    out.push_back(job->view);
  }
  return out;
}

}  // namespace kanon::web
