// The journal sinks of hived/journal.h: in memory and a file.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "hived/journal.h"
#include "hived/state.h"

namespace hived {
namespace {

absl::Status FileError(const char* what, const std::string& path, int err) {
  return absl::UnavailableError(absl::StrCat(what, " ", path, ": ", std::strerror(err)));
}

}  // namespace

JournalSink::~JournalSink() = default;

absl::Status MemoryJournalSink::Append(std::string_view frame) {
  data_.append(frame.data(), frame.size());
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<FileJournalSink>> FileJournalSink::Open(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "ab");
  if (f == nullptr) return FileError("cannot open the journal", path, errno);
  return std::unique_ptr<FileJournalSink>(new FileJournalSink(f, path));
}

FileJournalSink::~FileJournalSink() { std::fclose(file_); }

absl::Status FileJournalSink::Append(std::string_view frame) {
  if (std::fwrite(frame.data(), 1, frame.size(), file_) != frame.size()) {
    return FileError("cannot append to the journal", path_, errno);
  }
  return absl::OkStatus();
}

absl::Status FileJournalSink::Flush() {
  if (std::fflush(file_) != 0) return FileError("cannot flush the journal", path_, errno);
  return absl::OkStatus();
}

absl::Status FileJournalSink::Sync() {
  if (absl::Status s = Flush(); !s.ok()) return s;
  if (::fsync(fileno(file_)) != 0) return FileError("cannot sync the journal", path_, errno);
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadJournalFile(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return FileError("cannot open the journal", path, errno);
  std::string out;
  char buf[1 << 16];
  size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) {
    if (out.size() + n > static_cast<size_t>(kMaxStateBytes) * 4) {
      std::fclose(f);
      return absl::InvalidArgumentError(
          absl::StrCat("the journal ", path, " is over ", kMaxStateBytes * 4,
                       " bytes: take a checkpoint more often (StartJournal) and start a new file"));
    }
    out.append(buf, n);
  }
  const bool failed = std::ferror(f) != 0;
  std::fclose(f);
  if (failed) return FileError("cannot read the journal", path, EIO);
  return out;
}

}  // namespace hived
