// Files an export leaves on the kanon host (its reports, which hold example
// values of the source table) where no other local user can read them or
// redirect them: the report directory is this process's own and writable by
// no one else, and each file is created new (never through a link or over
// an existing file) with mode 0600.
#pragma once

#include <string>

namespace kanon::publish {

// Creates `dir` (mode 0700) if missing. Throws ExportError when it is a
// symbolic link or not a directory, belongs to another user, or others may
// write to it (a shared directory such as /tmp itself).
void ensure_private_directory(const std::string& dir);

// Writes `text` to a new file at `path`, mode 0600, without following a
// symbolic link. False when something already exists at `path`; throws
// ExportError on any other failure.
bool write_new_file(const std::string& path, const std::string& text);

}  // namespace kanon::publish
