// sim/common/output_dir.h: a command's output folder whose files are whole or absent.
//
// A command names every file it may write there (its layout, e.g. "summary.json",
// "baseline-private/jobs.csv", "plots/anomaly.png"). Opening the folder clears what an
// earlier run left under those names; each output is then written to a temporary beside its
// final name and all of them are renamed into place by `Commit`. Without `Commit` (an error,
// an early return) the destructor removes the temporaries and the subfolders it created (the
// output folder too, when `Open` created it and it is still empty), so a failed run leaves
// neither its own partial outputs, nor an empty folder that looks like a run, nor an earlier
// run's files that would look current.
//
// Invariants (tests/unit/sim/output_dir_test.cc):
//   1. Only names of the layout, temporaries named ".<name>.tmp-<pid>" and staged folders
//      ".<folder>.tmp-<pid>" (".staging.tmp-<pid>" for the top) are ever removed; a subfolder
//      is removed only when it is empty.
//      A user's other files are never touched.
//   2. After `Open`, no file of the layout is left from an earlier run.
//   3. After a successful `Commit`, exactly the files written in this run are in place; after a
//      failure or without `Commit`, none of the layout's files is, and the folders `Open`
//      created for the output (when left empty) are gone.
//
// Example:
//   absl::StatusOr<std::unique_ptr<OutputDir>> out =
//       OutputDir::Open("runs/a", {"summary.json", "jobs.csv"});
//   if (!out.ok()) return out.status();
//   HIVED_RETURN_IF_ERROR((*out)->Write("summary.json", json));
//   HIVED_RETURN_IF_ERROR((*out)->Write("jobs.csv", csv));
//   HIVED_RETURN_IF_ERROR((*out)->Commit());
//
// Thread safety: not thread-safe; one OutputDir per folder at a time (two processes writing
// the same folder at once are not supported).
#ifndef HIVED_SIM_COMMON_OUTPUT_DIR_H_
#define HIVED_SIM_COMMON_OUTPUT_DIR_H_

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace hived::sim {

class OutputDir {
 public:
  // Creates `dir` if needed and clears the layout's files (and stale temporaries) left there
  // by an earlier run; subfolders of the layout left empty are removed.
  // Errors: kInvalidArgument when a layout name is taken by something else than a file (a
  // folder named "jobs.csv", a file named "plots"); nothing is removed then. kInternal when
  // the folder cannot be created or cleared.
  static absl::StatusOr<std::unique_ptr<OutputDir>> Open(std::filesystem::path dir,
                                                         std::vector<std::string> layout);
  // kInvalidArgument when one of `inputs` (existing files the command reads) is a file of
  // `layout` in `dir`, which `Open` would remove before it is read; OK otherwise.
  static absl::Status CheckInputs(const std::filesystem::path& dir,
                                  const std::vector<std::string>& layout,
                                  const std::vector<std::string>& inputs);
  // The whole life of a folder of small outputs held in memory: `CheckInputs` of `inputs`,
  // `Open` with the names of `files` as the layout, `Write` of each, `Commit`. Errors: theirs.
  static absl::Status WriteAll(const std::filesystem::path& dir,
                               const std::vector<std::pair<std::string, std::string>>& files,
                               const std::vector<std::string>& inputs);
  OutputDir(const OutputDir&) = delete;
  OutputDir& operator=(const OutputDir&) = delete;
  ~OutputDir();

  // Writes `text` to a temporary standing for `relative`, a name of the layout.
  // Errors: kInvalidArgument for a name outside the layout; kInternal when writing fails.
  absl::Status Write(const std::string& relative, std::string_view text);

  // A temporary folder standing for the layout's subfolder `relative` (e.g. "plots"; "" for
  // the output folder itself), for writers that make several files themselves. `Commit` moves
  // the files of the layout found in it into place. Errors: as `Write`.
  absl::StatusOr<std::filesystem::path> StageFolder(const std::string& relative);

  // Renames every staged output into place. On failure the ones already renamed are removed
  // again (kInternal). Call at most once.
  absl::Status Commit();

  const std::filesystem::path& dir() const { return dir_; }

 private:
  OutputDir(std::filesystem::path dir, std::vector<std::string> layout);
  bool InLayout(const std::string& relative) const;
  bool IsLayoutFolder(const std::string& relative) const;
  absl::Status EnsureParent(const std::string& relative);
  std::filesystem::path TempFor(const std::filesystem::path& final_path) const;
  void RemoveCreatedFolders();

  std::filesystem::path dir_;
  std::vector<std::string> layout_;
  std::string suffix_;  // ".tmp-<pid>"
  struct Staged {
    std::filesystem::path temp;
    std::filesystem::path final_path;
  };
  std::vector<Staged> staged_;                  // files, in write order
  std::vector<Staged> staged_folders_;          // temporary folders; final_path relative to dir_
  std::vector<std::filesystem::path> created_;  // subfolders made by this run
  bool committed_ = false;
};

}  // namespace hived::sim

#endif  // HIVED_SIM_COMMON_OUTPUT_DIR_H_
