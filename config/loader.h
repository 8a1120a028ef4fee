// config/loader.h: the YAML -> ClusterSpec loader's class, private to config/. loader.cc
// holds the strict, located reading (keys, kinds, scalars, error positions); loader_schema.cc
// walks HiveD's schema with it. Every error is a `ConfigError` with the file position of its
// YAML path; the semantic rules run after parsing (hierarchy/spec_analysis.h).
//
// Invariants: (1) no exception leaves `Load`; (2) at most `ConfigLimits::max_errors` errors
// are kept, the rest counted; (3) the walk visits at most `ConfigLimits::max_yaml_nodes`
// units of work (aliases cannot make it longer).
//
// Not thread-safe; one Loader per load.
#ifndef HIVED_CONFIG_LOADER_H_
#define HIVED_CONFIG_LOADER_H_

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "hived/config.h"
#include "strict_yaml/strict_yaml.h"

namespace hived::config_internal {

class Loader {
 public:
  Loader(std::string file, const ConfigLimits& limits)
      : file_(std::move(file)), limits_(limits), cap_(limits.max_errors) {}

  ConfigLoadResult Load(std::string_view yaml);

 private:
  // One key of a mapping, with its value.
  struct Field {
    std::string key;
    YAML::Node key_node;
    YAML::Node value;
  };

  void Error(const YAML::Mark& mark, const std::string& path, std::string message,
             std::string hint = "") {
    ConfigError error;
    error.file = file_;
    if (!mark.is_null()) {
      error.line = mark.line + 1;
      error.column = mark.column + 1;
    }
    error.yaml_path = path;
    error.message = std::move(message);
    error.hint = std::move(hint);
    if (!path.empty()) errored_paths_.insert(path);
    if (cap_.Admit()) errors_.push_back(std::move(error));
  }

  void Note(const std::string& path, const YAML::Mark& mark) {
    if (!mark.is_null()) marks_.emplace(path, mark);
  }

  // Counts a visited node; false (once reported) when the YAML is too large.
  bool Visit(const YAML::Node& node, const std::string& path) {
    work_ += 1 + static_cast<int64_t>(path.size() / 16);
    if (work_ <= limits_.max_yaml_nodes) return true;
    if (!too_large_) {
      too_large_ = true;
      Error(node.Mark(), path,
            "the config is too large (too many YAML nodes, or aliases expanding to them)",
            "expand fewer aliases or split the cluster");
    }
    return false;
  }

  // The keys of a mapping node, checked against `allowed`; unknown, misplaced, duplicate and
  // non-scalar keys are reported. A null node is an empty mapping.
  bool Fields(const YAML::Node& node, const std::string& path,
              const std::vector<std::string>& allowed, std::vector<Field>* fields);
  // Entries of a mapping whose keys are names (cell types, VCs).
  bool NamedEntries(const YAML::Node& node, const std::string& path, std::vector<Field>* entries);
  bool Sequence(const YAML::Node& node, const std::string& path, const char* what);

  bool String(const YAML::Node& node, const std::string& path, std::string* out);
  bool Int(const YAML::Node& node, const std::string& path, int64_t min, int64_t max, int64_t* out);
  bool Bool(const YAML::Node& node, const std::string& path, bool* out);
  void Required(const YAML::Node& map, const std::string& path, const std::vector<Field>& fields,
                const char* key);

  void ParseRoot(const YAML::Node& root);
  void ParsePhysicalCluster(const YAML::Node& node, const std::string& path);
  void ParseCellType(const Field& entry, const std::string& path);
  void ParseLeafCellType(const Field& entry, const std::string& path);
  // One `mig*` key of a leaf cell type (config/mig_keys.cc).
  void ParseMigKey(const Field& f, const std::string& path, LeafCellTypeSpec* type);
  void ParsePhysicalCell(const YAML::Node& node, const std::string& path, int32_t depth,
                         PhysicalCellSpec* cell);
  void ParseVirtualClusters(const YAML::Node& node, const std::string& path);
  void ParseVirtualCluster(const Field& entry, const std::string& path);

  // The mark of the node at `path`, or of its nearest recorded ancestor.
  YAML::Mark Locate(std::string path) const;
  bool Suppressed(const std::string& path) const;

  std::string file_;
  ConfigLimits limits_;
  yaml_internal::ErrorCap cap_;
  ClusterSpec spec_;
  std::vector<ConfigError> errors_;
  std::unordered_map<std::string, YAML::Mark> marks_;
  std::unordered_set<std::string> errored_paths_;
  int64_t work_ = 0;
  bool too_large_ = false;
  bool skip_semantic_ = false;  // the document is not a config at all
};

}  // namespace hived::config_internal

#endif  // HIVED_CONFIG_LOADER_H_
