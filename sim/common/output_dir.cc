#include "sim/common/output_dir.h"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <system_error>
#include <utility>

#include "absl/strings/str_cat.h"
#include "sim/common/csv.h"

namespace hived::sim {
namespace fs = std::filesystem;
namespace {

absl::Status FsError(std::string_view what, const fs::path& path, const std::error_code& ec) {
  return absl::InternalError(
      absl::StrCat("cannot ", Av(what), " ", path.string(), ": ", ec.message()));
}

// The subfolders the layout's names lie in ("baseline-private", "plots"), deepest first.
std::vector<std::string> Subfolders(const std::vector<std::string>& layout) {
  std::vector<std::string> out;
  for (const std::string& name : layout) {
    for (fs::path p = fs::path(name).parent_path(); !p.empty(); p = p.parent_path()) {
      if (std::find(out.begin(), out.end(), p.string()) == out.end()) out.push_back(p.string());
    }
  }
  std::sort(out.begin(), out.end(), [](const std::string& a, const std::string& b) {
    return a.size() != b.size() ? a.size() > b.size() : a < b;
  });
  return out;
}

// The base of a staged folder's temporary name: the subfolder, or "staging" for the top.
std::string StagingBase(const std::string& folder) { return folder.empty() ? "staging" : folder; }

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// True when `name` is ".<base>.tmp-<anything>" for one of `bases`.
bool IsTemporaryOf(std::string_view name, const std::vector<std::string>& bases) {
  for (const std::string& base : bases) {
    if (StartsWith(name, absl::StrCat(".", base, ".tmp-"))) return true;
  }
  return false;
}

// The layout's file names directly in the subfolder `folder` ("" for the top).
std::vector<std::string> NamesIn(const std::vector<std::string>& layout, const fs::path& folder) {
  std::vector<std::string> out;
  for (const std::string& name : layout) {
    const fs::path p(name);
    if (p.parent_path() == folder) out.push_back(p.filename().string());
  }
  return out;
}

// Removes, in `folder`, the files named in `names` and their temporaries; then the folder
// itself when `remove_if_empty` and it is empty. Entries are visited in sorted order.
absl::Status ClearFolder(const fs::path& folder, const std::vector<std::string>& names,
                         bool remove_if_empty) {
  std::error_code ec;
  if (!fs::is_directory(fs::symlink_status(folder, ec))) return absl::OkStatus();
  std::vector<fs::path> entries;
  for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    entries.push_back(it->path());
  }
  if (ec) return FsError("list", folder, ec);
  std::sort(entries.begin(), entries.end());
  for (const fs::path& entry : entries) {
    const std::string name = entry.filename().string();
    const bool ours =
        std::find(names.begin(), names.end(), name) != names.end() || IsTemporaryOf(name, names);
    if (!ours || fs::is_directory(fs::symlink_status(entry, ec))) continue;
    if (!fs::remove(entry, ec) && ec) return FsError("remove", entry, ec);
  }
  if (remove_if_empty && fs::is_empty(folder, ec) && !ec) {
    if (!fs::remove(folder, ec) && ec) return FsError("remove", folder, ec);
  }
  return absl::OkStatus();
}

}  // namespace

OutputDir::OutputDir(fs::path dir, std::vector<std::string> layout)
    : dir_(std::move(dir)),
      layout_(std::move(layout)),
      suffix_(absl::StrCat(".tmp-", static_cast<int64_t>(getpid()))) {}

absl::StatusOr<std::unique_ptr<OutputDir>> OutputDir::Open(fs::path dir,
                                                           std::vector<std::string> layout) {
  std::error_code ec;
  // The folders this run creates (outermost first), removed again when it fails.
  std::vector<fs::path> made;
  fs::path missing = dir.lexically_normal();
  if (!missing.has_filename()) missing = missing.parent_path();  // "out/" names "out"
  while (!missing.empty() && !fs::exists(fs::symlink_status(missing, ec))) {
    made.insert(made.begin(), missing);
    if (missing == missing.parent_path()) break;
    missing = missing.parent_path();
  }
  // From here on, a failure's return destroys `opened`, which removes `made` (when empty).
  auto opened = std::unique_ptr<OutputDir>(new OutputDir(dir, layout));
  opened->created_ = std::move(made);
  fs::create_directories(dir, ec);
  if (ec) return FsError("create", dir, ec);
  const std::vector<std::string> folders = Subfolders(layout);
  // Refuse before removing anything when a name is taken by something we did not write.
  for (const std::string& name : layout) {
    const fs::file_status st = fs::symlink_status(dir / name, ec);
    if (fs::exists(st) && !fs::is_regular_file(st) && !fs::is_symlink(st)) {
      return absl::InvalidArgumentError(
          absl::StrCat((dir / name).string(),
                       " exists and is not a file; hived-sim writes its output "
                       "there: move it away or choose another output folder"));
    }
  }
  for (const std::string& folder : folders) {
    const fs::file_status st = fs::symlink_status(dir / folder, ec);
    if (fs::exists(st) && !fs::is_directory(st)) {
      return absl::InvalidArgumentError(
          absl::StrCat((dir / folder).string(),
                       " exists and is not a folder; hived-sim writes its output "
                       "there: move it away or choose another output folder"));
    }
  }
  // Stale staged folders (".plots.tmp-<pid>" of a killed run): their layout files, then them.
  std::vector<std::string> staging_folders = folders;
  staging_folders.emplace_back();  // the top ("" -> ".staging.tmp-<pid>")
  for (const std::string& folder : staging_folders) {
    std::vector<fs::path> stale;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      const std::string name = it->path().filename().string();
      if (IsTemporaryOf(name, {StagingBase(folder)}) && fs::is_directory(it->symlink_status(ec))) {
        stale.push_back(it->path());
      }
    }
    if (ec) return FsError("list", dir, ec);
    std::sort(stale.begin(), stale.end());
    for (const fs::path& p : stale) {
      if (absl::Status s = ClearFolder(p, NamesIn(layout, folder), /*remove_if_empty=*/true);
          !s.ok()) {
        return s;
      }
    }
  }
  for (const std::string& folder : folders) {
    if (absl::Status s = ClearFolder(dir / folder, NamesIn(layout, folder), true); !s.ok()) {
      return s;
    }
  }
  if (absl::Status s = ClearFolder(dir, NamesIn(layout, ""), /*remove_if_empty=*/false); !s.ok()) {
    return s;
  }
  return opened;
}

absl::Status OutputDir::CheckInputs(const fs::path& dir, const std::vector<std::string>& layout,
                                    const std::vector<std::string>& inputs) {
  for (const std::string& input : inputs) {
    std::error_code ec;
    if (input.empty() || !fs::exists(input, ec)) continue;
    for (const std::string& name : layout) {
      if (fs::exists(dir / name, ec) && fs::equivalent(input, dir / name, ec) && !ec) {
        return absl::InvalidArgumentError(
            absl::StrCat("the input ", input, " would be replaced by the output ",
                         (dir / name).string(), "; move it or choose another output folder"));
      }
    }
  }
  return absl::OkStatus();
}

OutputDir::~OutputDir() {
  if (committed_) return;
  std::error_code ec;
  for (const Staged& s : staged_) fs::remove(s.temp, ec);
  // Staged folders are ours alone (named with this process's id, made by StageFolder).
  for (const Staged& s : staged_folders_) fs::remove_all(s.temp, ec);
  RemoveCreatedFolders();
}

void OutputDir::RemoveCreatedFolders() {
  std::error_code ec;
  for (auto it = created_.rbegin(); it != created_.rend(); ++it) {
    if (fs::is_empty(*it, ec) && !ec) fs::remove(*it, ec);
  }
}

bool OutputDir::InLayout(const std::string& relative) const {
  return std::find(layout_.begin(), layout_.end(), relative) != layout_.end();
}

bool OutputDir::IsLayoutFolder(const std::string& relative) const {
  const std::vector<std::string> folders = Subfolders(layout_);
  return std::find(folders.begin(), folders.end(), relative) != folders.end();
}

absl::Status OutputDir::EnsureParent(const std::string& relative) {
  std::vector<fs::path> missing;
  for (fs::path p = fs::path(relative).parent_path(); !p.empty(); p = p.parent_path()) {
    std::error_code ec;
    if (!fs::exists(dir_ / p, ec)) missing.push_back(dir_ / p);
  }
  for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
    std::error_code ec;
    fs::create_directory(*it, ec);
    if (ec) return FsError("create", *it, ec);
    created_.push_back(*it);
  }
  return absl::OkStatus();
}

fs::path OutputDir::TempFor(const fs::path& final_path) const {
  return final_path.parent_path() / absl::StrCat(".", final_path.filename().string(), suffix_);
}

absl::Status OutputDir::Write(const std::string& relative, std::string_view text) {
  if (!InLayout(relative)) {
    return absl::InvalidArgumentError(absl::StrCat(relative, " is not an output of this command"));
  }
  if (absl::Status s = EnsureParent(relative); !s.ok()) return s;
  const fs::path final_path = dir_ / relative;
  const fs::path temp = TempFor(final_path);
  auto known = std::find_if(staged_.begin(), staged_.end(),
                            [&](const Staged& s) { return s.final_path == final_path; });
  if (known == staged_.end()) staged_.push_back({temp, final_path});
  std::ofstream out(temp, std::ios::binary | std::ios::trunc);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  out.close();
  if (!out) return absl::InternalError(absl::StrCat("cannot write ", final_path.string()));
  return absl::OkStatus();
}

absl::StatusOr<fs::path> OutputDir::StageFolder(const std::string& relative) {
  if (!relative.empty() && !IsLayoutFolder(relative)) {
    return absl::InvalidArgumentError(
        absl::StrCat(relative, " is not an output folder of this command"));
  }
  const fs::path temp = dir_ / absl::StrCat(".", StagingBase(relative), suffix_);
  std::error_code ec;
  fs::create_directory(temp, ec);
  if (ec) return FsError("create", temp, ec);
  staged_folders_.push_back({temp, relative});
  return temp;
}

absl::Status OutputDir::WriteAll(const fs::path& dir,
                                 const std::vector<std::pair<std::string, std::string>>& files,
                                 const std::vector<std::string>& inputs) {
  std::vector<std::string> layout;
  layout.reserve(files.size());
  for (const auto& file : files) layout.push_back(file.first);
  if (absl::Status s = CheckInputs(dir, layout, inputs); !s.ok()) return s;
  absl::StatusOr<std::unique_ptr<OutputDir>> out = Open(dir, layout);
  if (!out.ok()) return out.status();
  for (const auto& [name, text] : files) {
    if (absl::Status s = (*out)->Write(name, text); !s.ok()) return s;
  }
  return (*out)->Commit();
}

absl::Status OutputDir::Commit() {
  std::vector<Staged> moves = staged_;
  std::error_code ec;
  for (const Staged& folder : staged_folders_) {
    const fs::path relative = folder.final_path;  // relative to dir_ for staged folders
    for (const std::string& name : NamesIn(layout_, relative)) {
      if (!fs::is_regular_file(folder.temp / name, ec)) continue;
      if (absl::Status s = EnsureParent((relative / name).string()); !s.ok()) return s;
      moves.push_back({folder.temp / name, dir_ / relative / name});
    }
  }
  std::vector<fs::path> done;
  for (const Staged& m : moves) {
    fs::rename(m.temp, m.final_path, ec);
    if (ec) {
      const absl::Status error = FsError("rename into place", m.final_path, ec);
      for (const fs::path& p : done) fs::remove(p, ec);
      for (const Staged& s : moves) fs::remove(s.temp, ec);
      return error;
    }
    done.push_back(m.final_path);
  }
  for (const Staged& folder : staged_folders_) fs::remove_all(folder.temp, ec);
  committed_ = true;
  return absl::OkStatus();
}

}  // namespace hived::sim
