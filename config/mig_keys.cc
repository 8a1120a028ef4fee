// The MIG keys of a leaf cell type (config/mig_keys.h): built-in geometries, parsing and
// semantic checks.
#include "config/mig_keys.h"

#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "config/loader.h"

namespace hived {
namespace {

// NVIDIA's MIG user guide, "Supported MIG profiles" (the table in docs/gpu-sharing.md):
// {name, compute slices of 7, memory slices of 8, allowed first memory slice}.
const std::map<std::string, std::vector<MigProfileSpec>>& Builtins() {
  static const auto* table = [] {
    auto* t = new std::map<std::string, std::vector<MigProfileSpec>>;
    const auto profiles = [](const char* m1, const char* m2, const char* m3, const char* m4,
                             const char* m5, const char* m6) {
      return std::vector<MigProfileSpec>{{m1, 1, 1, {0, 1, 2, 3, 4, 5, 6}},
                                         {m2, 1, 2, {0, 2, 4, 6}},
                                         {m3, 2, 2, {0, 2, 4}},
                                         {m4, 3, 4, {0, 4}},
                                         {m5, 4, 4, {0}},
                                         {m6, 7, 8, {0}}};
    };
    (*t)["A100-40GB"] = profiles("1g.5gb", "1g.10gb", "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb");
    (*t)["A100-80GB"] = profiles("1g.10gb", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb");
    (*t)["H100-80GB"] = profiles("1g.10gb", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb");
    return t;
  }();
  return *table;
}

}  // namespace

const std::vector<MigProfileSpec>* BuiltinMigProfiles(std::string_view geometry) {
  auto it = Builtins().find(std::string(geometry));
  return it == Builtins().end() ? nullptr : &it->second;
}

std::vector<std::string> BuiltinMigGeometries() {
  std::vector<std::string> out;
  for (const auto& [name, profiles] : Builtins()) out.push_back(name);
  return out;
}

ResolvedMigGeometry ResolveMigGeometry(const LeafCellTypeSpec& type) {
  ResolvedMigGeometry g;
  if (type.mig_compute_slices > 0) g.compute_slices = type.mig_compute_slices;
  if (type.mig_memory_slices > 0) g.memory_slices = type.mig_memory_slices;
  if (!type.mig_geometry.empty()) {
    const std::vector<MigProfileSpec>* b = BuiltinMigProfiles(type.mig_geometry);
    if (b != nullptr) g.profiles = *b;
  } else {
    g.profiles = type.mig_profiles;
  }
  return g;
}

namespace config_internal {

void Loader::ParseMigKey(const Field& f, const std::string& path, LeafCellTypeSpec* type) {
  if (f.key == "migGeometry") {
    String(f.value, path, &type->mig_geometry);
    return;
  }
  if (f.key == "migComputeSlices" || f.key == "migMemorySlices") {
    int64_t n = 0;
    if (Int(f.value, path, 1, kMaxMigSlices, &n)) {
      (f.key == "migComputeSlices" ? type->mig_compute_slices : type->mig_memory_slices) =
          static_cast<int32_t>(n);
    }
    return;
  }
  // migProfiles: a sequence of {name, computeSlices, memorySlices, starts}.
  if (!Sequence(f.value, path, "MIG profiles")) return;
  static const std::vector<std::string> kAllowed = {"name", "computeSlices", "memorySlices",
                                                    "starts"};
  for (size_t i = 0; i < f.value.size(); ++i) {
    const std::string item = absl::StrCat(path, "[", i, "]");
    Note(item, f.value[i].Mark());
    MigProfileSpec p;
    std::vector<Field> fields;
    if (!Fields(f.value[i], item, kAllowed, &fields)) continue;
    for (const Field& g : fields) {
      const std::string key_path = absl::StrCat(item, ".", g.key);
      int64_t n = 0;
      if (g.key == "name") {
        String(g.value, key_path, &p.name);
      } else if (g.key == "starts") {
        if (!Sequence(g.value, key_path, "memory-slice positions")) continue;
        for (size_t k = 0; k < g.value.size(); ++k) {
          if (Int(g.value[k], absl::StrCat(key_path, "[", k, "]"), 0, kMaxMigSlices - 1, &n)) {
            p.starts.push_back(static_cast<int32_t>(n));
          }
        }
      } else if (Int(g.value, key_path, 1, kMaxMigSlices, &n)) {
        (g.key == "computeSlices" ? p.compute_slices : p.memory_slices) = static_cast<int32_t>(n);
      }
    }
    for (const char* key : {"name", "computeSlices", "memorySlices", "starts"}) {
      Required(f.value[i], item, fields, key);
    }
    type->mig_profiles.push_back(std::move(p));
  }
}

void AppendMigKeyErrors(const ClusterSpec& spec, std::vector<ConfigError>* errors) {
  for (const LeafCellTypeSpec& leaf : spec.leaf_cell_types) {
    const std::string path = absl::StrCat("physicalCluster.leafCellTypes.", leaf.name);
    auto error = [&](const std::string& where, std::string message, std::string hint = "") {
      errors->push_back({"", 0, 0, absl::StrCat(path, where), std::move(message), std::move(hint)});
    };
    const bool declared = !leaf.mig_geometry.empty() || !leaf.mig_profiles.empty();
    if (!declared) {
      if (leaf.mig_compute_slices != 0 || leaf.mig_memory_slices != 0) {
        error(leaf.mig_compute_slices != 0 ? ".migComputeSlices" : ".migMemorySlices",
              "MIG slices without MIG profiles", "add `migProfiles` or remove the slices");
      }
      continue;
    }
    if (leaf.sharing == SharingMode::kNone) {
      error(".sharingMode", "a MIG type is shared: `sharingMode: none` contradicts its MIG keys",
            "remove `sharingMode: none` or the MIG keys");
    }
    if (!leaf.mig_geometry.empty()) {
      if (BuiltinMigProfiles(leaf.mig_geometry) == nullptr) {
        error(".migGeometry", absl::StrCat("unknown MIG geometry `", leaf.mig_geometry, "`"),
              absl::StrCat("built-in geometries: ", absl::StrJoin(BuiltinMigGeometries(), ", "),
                           "; or list `migProfiles`"));
      }
      if (!leaf.mig_profiles.empty() || leaf.mig_compute_slices != 0 ||
          leaf.mig_memory_slices != 0) {
        error(".migGeometry", "a built-in MIG geometry and its own profiles or slices",
              "write either `migGeometry` or `migProfiles` (with the slices)");
      }
      continue;
    }
    const ResolvedMigGeometry g = ResolveMigGeometry(leaf);
    std::set<std::string> names;
    for (size_t i = 0; i < leaf.mig_profiles.size(); ++i) {
      const MigProfileSpec& p = leaf.mig_profiles[i];
      const std::string item = absl::StrCat(".migProfiles[", i, "]");
      if (p.name.empty()) continue;  // reported while parsing (required)
      if (!names.insert(p.name).second) {
        error(absl::StrCat(item, ".name"), absl::StrCat("MIG profile `", p.name, "` twice"));
      }
      if (p.compute_slices > g.compute_slices) {
        error(absl::StrCat(item, ".computeSlices"),
              absl::StrCat("profile `", p.name, "` takes ", p.compute_slices,
                           " compute slices; the GPU has ", g.compute_slices));
      }
      if (p.memory_slices > g.memory_slices) {
        error(absl::StrCat(item, ".memorySlices"),
              absl::StrCat("profile `", p.name, "` takes ", p.memory_slices,
                           " memory slices; the GPU has ", g.memory_slices));
        continue;
      }
      if (p.starts.empty()) {
        error(absl::StrCat(item, ".starts"), absl::StrCat("profile `", p.name, "` has no start"),
              "list the memory slices an instance may begin at");
      }
      for (size_t k = 0; k < p.starts.size(); ++k) {
        const std::string at = absl::StrCat(item, ".starts[", k, "]");
        if (p.starts[k] + p.memory_slices > g.memory_slices) {
          error(at, absl::StrCat("an instance of `", p.name, "` at ", p.starts[k],
                                 " ends past memory slice ", g.memory_slices - 1));
        } else if (k > 0 && p.starts[k] <= p.starts[k - 1]) {
          error(at, "starts must be ascending, each once");
        }
      }
    }
  }
}

}  // namespace config_internal
}  // namespace hived
