// HiveD's config schema, walked with the strict readers of loader.cc: which keys each
// mapping allows, which are required, and how each value maps to the `ClusterSpec`.
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "config/loader.h"

namespace hived::config_internal {
namespace {

constexpr int32_t kMaxChildDepth = 64;              // `cellChildren` nesting
constexpr int64_t kMaxResource = int64_t{1} << 40;  // CPU milli, MiB: far above any machine

}  // namespace

using yaml_internal::KindName;

void Loader::ParseRoot(const YAML::Node& root) {
  static const std::vector<std::string> kAllowed = {"physicalCluster",
                                                    "virtualClusters",
                                                    "kubeApiServerAddress",
                                                    "kubeConfigFilePath",
                                                    "webServerAddress",
                                                    "forcePodBindThreshold",
                                                    "waitingPodSchedulingBlockMilliSec",
                                                    "quotaExcludeVCs"};
  std::vector<Field> fields;
  if (!root.IsMap()) {
    skip_semantic_ = true;
    Error(root.Mark(), "",
          absl::StrCat("expected a mapping with `physicalCluster` and `virtualClusters`, got ",
                       KindName(root)));
    return;
  }
  Fields(root, "", kAllowed, &fields);
  for (const Field& f : fields) {
    const std::string& path = f.key;
    if (f.key == "physicalCluster") {
      ParsePhysicalCluster(f.value, path);
    } else if (f.key == "virtualClusters") {
      ParseVirtualClusters(f.value, path);
    } else if (f.key == "forcePodBindThreshold") {
      int64_t ignored = 0;
      if (!f.value.IsNull()) {
        Int(f.value, path, std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max(),
            &ignored);
      }
    } else if (f.key == "waitingPodSchedulingBlockMilliSec") {
      int64_t ignored = 0;
      if (!f.value.IsNull()) {
        Int(f.value, path, std::numeric_limits<int64_t>::min() + 1,
            std::numeric_limits<int64_t>::max(), &ignored);
      }
    } else if (f.key == "quotaExcludeVCs") {
      if (Sequence(f.value, path, "VC names")) {
        for (size_t i = 0; i < f.value.size(); ++i) {
          std::string ignored;
          String(f.value[i], absl::StrCat(path, "[", i, "]"), &ignored);
        }
      }
    } else {  // the Kubernetes addresses: strings, ignored
      std::string ignored;
      String(f.value, path, &ignored);
    }
  }
}

void Loader::ParsePhysicalCluster(const YAML::Node& node, const std::string& path) {
  static const std::vector<std::string> kAllowed = {"cellTypes", "physicalCells", "skuTypes",
                                                    "leafCellTypes"};
  std::vector<Field> fields;
  if (!Fields(node, path, kAllowed, &fields)) return;
  for (const Field& f : fields) {
    const std::string field_path = absl::StrCat(path, ".", f.key);
    if (f.key == "cellTypes") {
      std::vector<Field> entries;
      NamedEntries(f.value, field_path, &entries);
      for (const Field& entry : entries) {
        ParseCellType(entry, absl::StrCat(field_path, ".", entry.key));
      }
    } else if (f.key == "physicalCells") {
      if (!Sequence(f.value, field_path, "physical cells")) continue;
      for (size_t i = 0; i < f.value.size() && !too_large_; ++i) {
        const std::string item_path = absl::StrCat(field_path, "[", i, "]");
        PhysicalCellSpec cell;
        ParsePhysicalCell(f.value[i], item_path, 0, &cell);
        spec_.physical_cells.push_back(std::move(cell));
      }
    } else if (f.key == "leafCellTypes") {
      std::vector<Field> entries;
      NamedEntries(f.value, field_path, &entries);
      for (const Field& entry : entries) {
        ParseLeafCellType(entry, absl::StrCat(field_path, ".", entry.key));
      }
    } else if (f.key == "skuTypes") {
      // OpenPAI's per-SKU resources; HiveD ignores them and so do we, but it is a mapping.
      if (!f.value.IsNull() && !f.value.IsMap()) {
        Error(f.value.Mark(), field_path,
              absl::StrCat("expected a mapping, got ", KindName(f.value)));
      }
    }
  }
}

void Loader::ParseCellType(const Field& entry, const std::string& path) {
  static const std::vector<std::string> kAllowed = {"childCellType", "childCellNumber",
                                                    "isNodeLevel"};
  CellTypeSpec type;
  type.name = entry.key;
  std::vector<Field> fields;
  if (Fields(entry.value, path, kAllowed, &fields)) {
    for (const Field& f : fields) {
      const std::string field_path = absl::StrCat(path, ".", f.key);
      if (f.key == "childCellType") {
        String(f.value, field_path, &type.child_cell_type);
      } else if (f.key == "childCellNumber") {
        int64_t number = 0;
        if (Int(f.value, field_path, std::numeric_limits<int32_t>::min(),
                std::numeric_limits<int32_t>::max(), &number)) {
          type.child_cell_number = static_cast<int32_t>(number);
        }
      } else if (f.key == "isNodeLevel") {
        Bool(f.value, field_path, &type.is_node_level);
      }
    }
    Required(entry.key_node, path, fields, "childCellType");
    Required(entry.key_node, path, fields, "childCellNumber");
  }
  spec_.cell_types.push_back(std::move(type));
}

void Loader::ParseLeafCellType(const Field& entry, const std::string& path) {
  static const std::vector<std::string> kAllowed = {"gpuMemoryMiB",    "sharingMode",
                                                    "migGeometry",     "migComputeSlices",
                                                    "migMemorySlices", "migProfiles"};
  LeafCellTypeSpec type;
  type.name = entry.key;
  std::vector<Field> fields;
  if (Fields(entry.value, path, kAllowed, &fields)) {
    for (const Field& f : fields) {
      const std::string field_path = absl::StrCat(path, ".", f.key);
      if (f.key == "gpuMemoryMiB") {
        Int(f.value, field_path, 1, kMaxResource, &type.gpu_memory_mib);
      } else if (f.key != "sharingMode") {
        ParseMigKey(f, field_path, &type);
      } else {
        std::string mode;
        if (!String(f.value, field_path, &mode)) continue;
        bool known = false;
        for (SharingMode m :
             {SharingMode::kSeparate, SharingMode::kProtected, SharingMode::kNone}) {
          if (mode == SharingModeName(m)) {
            type.sharing = m;
            known = true;
          }
        }
        if (!known) {
          Error(f.value.Mark(), field_path, absl::StrCat("unknown sharing mode `", mode, "`"),
                "use separate, protected or none");
        }
      }
    }
  }
  spec_.leaf_cell_types.push_back(std::move(type));
}

void Loader::ParsePhysicalCell(const YAML::Node& node, const std::string& path, int32_t depth,
                               PhysicalCellSpec* cell) {
  static const std::vector<std::string> kAllowed = {"cellType",     "cellAddress", "pinnedCellId",
                                                    "cellChildren", "cpuMilli",    "memoryMiB"};
  if (!Visit(node, path)) return;
  Note(path, node.Mark());
  std::vector<Field> fields;
  if (node.IsNull()) {
    Error(node.Mark(), path, "a physical cell item is empty",
          "write at least `cellAddress` or `cellType`, or remove the `-`");
    return;
  }
  if (!Fields(node, path, kAllowed, &fields)) return;
  for (const Field& f : fields) {
    const std::string field_path = absl::StrCat(path, ".", f.key);
    if (f.key == "cellType") {
      String(f.value, field_path, &cell->cell_type);
    } else if (f.key == "cellAddress") {
      String(f.value, field_path, &cell->cell_address);
    } else if (f.key == "pinnedCellId") {
      String(f.value, field_path, &cell->pinned_cell_id);
    } else if (f.key == "cpuMilli") {
      Int(f.value, field_path, 1, kMaxResource, &cell->cpu_milli);
    } else if (f.key == "memoryMiB") {
      Int(f.value, field_path, 1, kMaxResource, &cell->memory_mib);
    } else if (f.key == "cellChildren") {
      if (!Sequence(f.value, field_path, "child cells")) continue;  // null: generate them
      if (depth >= kMaxChildDepth) {
        Error(f.value.Mark(), field_path, "`cellChildren` are nested too deeply");
        continue;
      }
      for (size_t i = 0; i < f.value.size() && !too_large_; ++i) {
        PhysicalCellSpec child;
        ParsePhysicalCell(f.value[i], absl::StrCat(field_path, "[", i, "]"), depth + 1, &child);
        cell->cell_children.push_back(std::move(child));
      }
    }
  }
  if (depth == 0) Required(node, path, fields, "cellType");
}

void Loader::ParseVirtualClusters(const YAML::Node& node, const std::string& path) {
  std::vector<Field> entries;
  NamedEntries(node, path, &entries);
  for (const Field& entry : entries) {
    ParseVirtualCluster(entry, absl::StrCat(path, ".", entry.key));
  }
}

void Loader::ParseVirtualCluster(const Field& entry, const std::string& path) {
  static const std::vector<std::string> kAllowed = {"virtualCells", "pinnedCells"};
  static const std::vector<std::string> kCellKeys = {"cellType", "cellNumber"};
  static const std::vector<std::string> kPinKeys = {"pinnedCellId"};
  VirtualClusterSpec vc;
  vc.name = entry.key;
  std::vector<Field> fields;
  Fields(entry.value, path, kAllowed, &fields);
  for (const Field& f : fields) {
    const std::string field_path = absl::StrCat(path, ".", f.key);
    const bool cells = f.key == "virtualCells";
    if (!Sequence(f.value, field_path, cells ? "virtual cells" : "pinned cells")) continue;
    for (size_t i = 0; i < f.value.size() && !too_large_; ++i) {
      const YAML::Node item = f.value[i];
      const std::string item_path = absl::StrCat(field_path, "[", i, "]");
      if (!Visit(item, item_path)) break;
      Note(item_path, item.Mark());
      std::vector<Field> item_fields;
      if (item.IsNull() || !Fields(item, item_path, cells ? kCellKeys : kPinKeys, &item_fields)) {
        if (item.IsNull()) Error(item.Mark(), item_path, "empty list item");
        continue;
      }
      if (cells) {
        VirtualCellSpec cell;
        for (const Field& g : item_fields) {
          const std::string g_path = absl::StrCat(item_path, ".", g.key);
          if (g.key == "cellType") {
            String(g.value, g_path, &cell.cell_type);
          } else {
            int64_t number = 0;
            if (Int(g.value, g_path, std::numeric_limits<int32_t>::min(),
                    std::numeric_limits<int32_t>::max(), &number)) {
              cell.cell_number = static_cast<int32_t>(number);
            }
          }
        }
        Required(item, item_path, item_fields, "cellType");
        Required(item, item_path, item_fields, "cellNumber");
        vc.virtual_cells.push_back(std::move(cell));
      } else {
        PinnedCellSpec pin;
        for (const Field& g : item_fields) {
          String(g.value, absl::StrCat(item_path, ".", g.key), &pin.pinned_cell_id);
        }
        Required(item, item_path, item_fields, "pinnedCellId");
        vc.pinned_cells.push_back(std::move(pin));
      }
    }
  }
  spec_.virtual_clusters.push_back(std::move(vc));
}

}  // namespace hived::config_internal
