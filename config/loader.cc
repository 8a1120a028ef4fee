// YAML -> ClusterSpec (config/loader.h): the structural half of validation (keys, kinds,
// scalar types, required keys), then the semantic rules of `AnalyzeClusterSpec`, whose errors
// get their file positions here by looking their YAML paths up in the path -> mark map built
// while parsing. The text is parsed by strict_yaml/ (limits, UTF-8, one document); no
// exception leaves this file.
#include "config/loader.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdint>
#include <exception>
#include <limits>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "hierarchy/spec_analysis.h"
#include "hived/config.h"
#include "strict_yaml/strict_yaml.h"

namespace hived::config_internal {
namespace {

using hierarchy::DidYouMean;
using yaml_internal::IsPlain;
using yaml_internal::KindName;
using yaml_internal::Quote;

// Bounds on the walk: aliases can make a small file a huge tree. Each visited node costs one
// unit plus one per 16 bytes of its YAML path (paths are kept for positions), against
// `ConfigLimits::max_yaml_nodes` (the parser's events were counted against it already).

// Where each key of the schema belongs, for "misplaced key" hints.
const std::vector<std::pair<std::string, std::string>>& KeyHomes() {
  static const auto* homes = new std::vector<std::pair<std::string, std::string>>{
      {"physicalCluster", "the top level"},
      {"virtualClusters", "the top level"},
      {"kubeApiServerAddress", "the top level"},
      {"kubeConfigFilePath", "the top level"},
      {"webServerAddress", "the top level"},
      {"forcePodBindThreshold", "the top level"},
      {"waitingPodSchedulingBlockMilliSec", "the top level"},
      {"quotaExcludeVCs", "the top level"},
      {"cellTypes", "`physicalCluster`"},
      {"physicalCells", "`physicalCluster`"},
      {"skuTypes", "`physicalCluster`"},
      {"childCellType", "a `physicalCluster.cellTypes` entry"},
      {"childCellNumber", "a `physicalCluster.cellTypes` entry"},
      {"isNodeLevel", "a `physicalCluster.cellTypes` entry"},
      {"cellAddress", "a `physicalCells` item"},
      {"cellChildren", "a `physicalCells` item"},
      {"cellType", "a `physicalCells` or `virtualCells` item"},
      {"pinnedCellId", "a `physicalCells` or `pinnedCells` item"},
      {"virtualCells", "a `virtualClusters.<vc>` entry"},
      {"pinnedCells", "a `virtualClusters.<vc>` entry"},
      {"cellNumber", "a `virtualCells` item"},
      {"leafCellTypes", "`physicalCluster`"},
      {"gpuMemoryMiB", "a `physicalCluster.leafCellTypes` entry"},
      {"sharingMode", "a `physicalCluster.leafCellTypes` entry"},
      {"migGeometry", "a `physicalCluster.leafCellTypes` entry"},
      {"migProfiles", "a `physicalCluster.leafCellTypes` entry"},
      {"computeSlices", "a `migProfiles` item"},
      {"memorySlices", "a `migProfiles` item"},
      {"cpuMilli", "a node-level `physicalCells` item"},
      {"memoryMiB", "a node-level `physicalCells` item"},
  };
  return *homes;
}

}  // namespace

bool Loader::Fields(const YAML::Node& node, const std::string& path,
                    const std::vector<std::string>& allowed, std::vector<Field>* fields) {
  if (node.IsNull()) return true;
  if (!node.IsMap()) {
    Error(node.Mark(), path, absl::StrCat("expected a mapping, got ", KindName(node)),
          absl::StrCat("allowed keys: ", absl::StrJoin(allowed, ", ")));
    return false;
  }
  std::unordered_map<std::string, YAML::Mark> seen;
  for (auto it = node.begin(); it != node.end(); ++it) {
    if (!Visit(it->first, path)) return false;
    if (!it->first.IsScalar()) {
      Error(it->first.Mark(), path,
            absl::StrCat("expected a plain key, got ", KindName(it->first)));
      continue;
    }
    const std::string key = it->first.Scalar();
    const std::string key_path = absl::StrCat(path, path.empty() ? "" : ".", key);
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      std::string home;
      for (const auto& [name, place] : KeyHomes()) {
        if (name == key) home = place;
      }
      if (!home.empty()) {
        Error(it->first.Mark(), key_path, absl::StrCat("key `", key, "` is not allowed here"),
              absl::StrCat("`", key, "` belongs in ", home, "; check the indentation"));
      } else {
        std::string hint = DidYouMean(key, allowed);
        if (hint.empty()) hint = absl::StrCat("allowed keys: ", absl::StrJoin(allowed, ", "));
        Error(it->first.Mark(), key_path, absl::StrCat("unknown key ", Quote(key)), hint);
      }
      continue;
    }
    auto [prev, inserted] = seen.emplace(key, it->first.Mark());
    if (!inserted) {
      Error(it->first.Mark(), key_path,
            absl::StrCat("duplicate key `", key, "` (first at line ", prev->second.line + 1, ")"),
            "keep one of them");
      continue;
    }
    Note(key_path, it->first.Mark());
    fields->push_back({key, it->first, it->second});
  }
  return true;
}

bool Loader::NamedEntries(const YAML::Node& node, const std::string& path,
                          std::vector<Field>* entries) {
  if (node.IsNull()) return true;
  if (!node.IsMap()) {
    Error(node.Mark(), path, absl::StrCat("expected a mapping of names, got ", KindName(node)));
    return false;
  }
  std::unordered_map<std::string, YAML::Mark> seen;
  for (auto it = node.begin(); it != node.end(); ++it) {
    if (!Visit(it->first, path)) return false;
    if (!it->first.IsScalar()) {
      Error(it->first.Mark(), path, absl::StrCat("expected a name, got ", KindName(it->first)));
      continue;
    }
    const std::string key = it->first.Scalar();
    const std::string key_path = absl::StrCat(path, ".", key);
    auto [prev, inserted] = seen.emplace(key, it->first.Mark());
    if (!inserted) {
      Error(
          it->first.Mark(), key_path,
          absl::StrCat("`", key, "` is defined twice (first at line ", prev->second.line + 1, ")"),
          "keep one definition");
      continue;
    }
    Note(key_path, it->first.Mark());
    entries->push_back({key, it->first, it->second});
  }
  return true;
}

bool Loader::Sequence(const YAML::Node& node, const std::string& path, const char* what) {
  if (node.IsNull()) return false;
  if (!node.IsSequence()) {
    Error(node.Mark(), path, absl::StrCat("expected a list of ", what, ", got ", KindName(node)),
          "write each item on its own line starting with `- `");
    return false;
  }
  return true;
}

bool Loader::String(const YAML::Node& node, const std::string& path, std::string* out) {
  if (node.IsNull()) return true;
  if (!node.IsScalar()) {
    Error(node.Mark(), path, absl::StrCat("expected a string, got ", KindName(node)));
    return false;
  }
  *out = node.Scalar();
  return true;
}

bool Loader::Int(const YAML::Node& node, const std::string& path, int64_t min, int64_t max,
                 int64_t* out) {
  if (!node.IsScalar() || !IsPlain(node)) {
    Error(node.Mark(), path,
          absl::StrCat("expected an integer, got ",
                       node.IsScalar() ? absl::StrCat("the quoted string ", Quote(node.Scalar()))
                                       : KindName(node)));
    return false;
  }
  yaml_internal::Problem problem;
  std::optional<int64_t> value = yaml_internal::ParseInteger(node.Scalar(), min, max, &problem);
  if (!value) {
    Error(node.Mark(), path, std::move(problem.message), std::move(problem.hint));
    return false;
  }
  *out = *value;
  return true;
}

bool Loader::Bool(const YAML::Node& node, const std::string& path, bool* out) {
  if (node.IsScalar() && IsPlain(node)) {
    if (std::optional<bool> value = yaml_internal::ParseBool(node.Scalar())) {
      *out = *value;
      return true;
    }
  }
  Error(node.Mark(), path,
        absl::StrCat("expected `true` or `false`, got ",
                     node.IsScalar() ? Quote(node.Scalar()) : KindName(node)));
  return false;
}

void Loader::Required(const YAML::Node& map, const std::string& path,
                      const std::vector<Field>& fields, const char* key) {
  for (const Field& f : fields) {
    if (f.key == key) return;
  }
  Error(map.Mark(), absl::StrCat(path, ".", key), absl::StrCat("missing required key `", key, "`"));
}

YAML::Mark Loader::Locate(std::string path) const {
  while (true) {
    auto it = marks_.find(path);
    if (it != marks_.end()) return it->second;
    if (path.empty()) break;
    // Strip the last component: "[i]" or ".key". Keys may contain dots, but every recorded
    // path is found before stripping, so only missing trailing keys are ever stripped.
    if (path.back() == ']') {
      const size_t open = path.rfind('[');
      path.resize(open == std::string::npos ? 0 : open);
    } else {
      const size_t dot = path.rfind('.');
      path.resize(dot == std::string::npos ? 0 : dot);
    }
  }
  YAML::Mark start;
  start.line = 0;
  start.column = 0;
  return start;
}

bool Loader::Suppressed(const std::string& path) const {
  // An error already reported at this path or at an ancestor explains this one.
  std::string prefix = path;
  while (true) {
    if (errored_paths_.count(prefix) > 0) return true;
    if (prefix.empty()) return false;
    if (prefix.back() == ']') {
      const size_t open = prefix.rfind('[');
      prefix.resize(open == std::string::npos ? 0 : open);
    } else {
      const size_t dot = prefix.rfind('.');
      prefix.resize(dot == std::string::npos ? 0 : dot);
    }
  }
}

ConfigLoadResult Loader::Load(std::string_view yaml) {
  yaml_internal::ParsedDocument doc = yaml_internal::ParseDocument(yaml, limits_.max_yaml_nodes);
  if (doc.empty) {
    skip_semantic_ = true;
    Error(YAML::Mark(), "", "the config is empty",
          "a config needs `physicalCluster` (and usually `virtualClusters`)");
  }
  if (doc.problem) {
    skip_semantic_ = skip_semantic_ || !doc.has_root;
    Error(doc.problem->mark, "", doc.problem->message, doc.problem->hint);
  }
  if (doc.has_root) {
    try {
      Note("", doc.root.Mark());
      ParseRoot(doc.root);
    } catch (const YAML::Exception& e) {  // defensive: the accessors above do not throw
      skip_semantic_ = true;
      Error(e.mark, "", absl::StrCat("invalid YAML: ", e.msg));
    }
  }
  if (!skip_semantic_ && !too_large_) {
    std::vector<ConfigError> semantic = ValidateClusterSpec(spec_);
    for (ConfigError& error : semantic) {
      if (Suppressed(error.yaml_path)) continue;
      const YAML::Mark mark = Locate(error.yaml_path);
      error.file = file_;
      error.line = mark.line + 1;
      error.column = mark.column + 1;
      if (cap_.Admit()) errors_.push_back(std::move(error));
    }
  }
  for (ConfigError& error : errors_) {
    if (error.line <= 0) {
      error.line = 1;
      error.column = 1;
    }
  }
  std::stable_sort(errors_.begin(), errors_.end(), [](const ConfigError& a, const ConfigError& b) {
    return std::tie(a.line, a.column) < std::tie(b.line, b.column);
  });
  if (cap_.dropped() > 0) {
    errors_.push_back({file_, 1, 1, "", cap_.Summary(), "fix the errors above first"});
  }
  ConfigLoadResult result;
  result.spec = std::move(spec_);
  result.errors = std::move(errors_);
  return result;
}

}  // namespace hived::config_internal

namespace hived {

ConfigLoadResult LoadClusterSpecDetailed(std::string_view yaml, std::string_view file_name,
                                         const ConfigLimits& limits) {
  try {
    return config_internal::Loader(std::string(file_name), limits).Load(yaml);
  } catch (const std::exception& e) {  // e.g. out of memory: still never throw
    ConfigLoadResult result;
    result.errors.push_back(
        {std::string(file_name), 1, 1, "", absl::StrCat("cannot load the config: ", e.what()), ""});
    return result;
  }
}

ConfigLoadResult LoadClusterSpecDetailed(std::string_view yaml, std::string_view file_name) {
  return LoadClusterSpecDetailed(yaml, file_name, ConfigLimits());
}

absl::StatusOr<ClusterSpec> LoadClusterSpecString(std::string_view yaml, std::string_view file_name,
                                                  const ConfigLimits& limits) {
  ConfigLoadResult result = LoadClusterSpecDetailed(yaml, file_name, limits);
  if (result.ok()) return std::move(result.spec);
  std::vector<std::string> lines;
  lines.reserve(result.errors.size());
  for (const ConfigError& error : result.errors) lines.push_back(error.ToString());
  return absl::InvalidArgumentError(absl::StrJoin(lines, "\n"));
}

absl::StatusOr<ClusterSpec> LoadClusterSpecString(std::string_view yaml,
                                                  std::string_view file_name) {
  return LoadClusterSpecString(yaml, file_name, ConfigLimits());
}

absl::StatusOr<ClusterSpec> LoadClusterSpecFile(const std::string& path,
                                                const ConfigLimits& limits) {
  absl::StatusOr<std::string> text =
      yaml_internal::ReadFileLimited(path, limits.max_input_bytes, "config");
  if (!text.ok()) return text.status();
  return LoadClusterSpecString(*text, path, limits);
}

absl::StatusOr<ClusterSpec> LoadClusterSpecFile(const std::string& path) {
  return LoadClusterSpecFile(path, ConfigLimits());
}

}  // namespace hived
