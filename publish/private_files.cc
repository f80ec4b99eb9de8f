#include "publish/private_files.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "base/sqlstate.h"
#include "publish/export_request.h"

namespace kanon::publish {

namespace {

[[noreturn]] void fail(const std::string& what) {
  throw ExportError(sqlstate::kIoError, "kanon export: " + what);
}

}  // namespace

void ensure_private_directory(const std::string& dir) {
  namespace fs = std::filesystem;
  const fs::path path(dir);
  std::error_code ec;
  if (path.has_parent_path()) fs::create_directories(path.parent_path(), ec);
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
    fail(fmt::format("cannot create the report directory {}: {}", dir, std::strerror(errno)));
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0)
    fail(fmt::format("cannot read the report directory {}: {}", dir, std::strerror(errno)));
  if (S_ISLNK(st.st_mode))
    fail(
        fmt::format("the report directory {} is a symbolic link; set report_dir to a "
                    "directory of kanon's own",
                    dir));
  if (!S_ISDIR(st.st_mode)) fail(fmt::format("the report directory {} is not a directory", dir));
  if (st.st_uid != ::geteuid())
    fail(
        fmt::format("the report directory {} belongs to another user (uid {}); set report_dir "
                    "to a directory of kanon's own",
                    dir, st.st_uid));
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0)
    fail(
        fmt::format("others may write to the report directory {} (mode {:o}); set report_dir "
                    "to a directory only kanon writes",
                    dir, st.st_mode & 07777));
}

bool write_new_file(const std::string& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    if (errno == EEXIST) return false;
    fail(fmt::format("cannot create {}: {}", path, std::strerror(errno)));
  }
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int error = errno;
      ::close(fd);
      fail(fmt::format("cannot write {}: {}", path, std::strerror(error)));
    }
    done += static_cast<size_t>(n);
  }
  if (::close(fd) != 0) fail(fmt::format("cannot write {}: {}", path, std::strerror(errno)));
  return true;
}

}  // namespace kanon::publish
