// ClusterSpec -> HiveD YAML. Writes exactly what the spec holds (no defaults filled in), so
// loading the output gives back an equal spec: empty fields are left out, and the loader reads
// an absent field as empty.
#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "hived/config.h"

namespace hived {
namespace {

void WritePhysicalCell(YAML::Emitter& out, const PhysicalCellSpec& cell) {
  out << YAML::BeginMap;
  if (!cell.cell_type.empty()) out << YAML::Key << "cellType" << YAML::Value << cell.cell_type;
  if (!cell.cell_address.empty()) {
    out << YAML::Key << "cellAddress" << YAML::Value << cell.cell_address;
  }
  if (!cell.pinned_cell_id.empty()) {
    out << YAML::Key << "pinnedCellId" << YAML::Value << cell.pinned_cell_id;
  }
  if (cell.cpu_milli != 0) out << YAML::Key << "cpuMilli" << YAML::Value << cell.cpu_milli;
  if (cell.memory_mib != 0) out << YAML::Key << "memoryMiB" << YAML::Value << cell.memory_mib;
  if (!cell.cell_children.empty()) {
    out << YAML::Key << "cellChildren" << YAML::Value << YAML::BeginSeq;
    for (const PhysicalCellSpec& child : cell.cell_children) WritePhysicalCell(out, child);
    out << YAML::EndSeq;
  }
  out << YAML::EndMap;
}

// The MIG keys of a leaf cell type, as declared (a built-in name stays a name).
void WriteMigKeys(YAML::Emitter& out, const LeafCellTypeSpec& t) {
  if (!t.mig_geometry.empty()) out << YAML::Key << "migGeometry" << YAML::Value << t.mig_geometry;
  if (t.mig_compute_slices != 0) {
    out << YAML::Key << "migComputeSlices" << YAML::Value << t.mig_compute_slices;
  }
  if (t.mig_memory_slices != 0) {
    out << YAML::Key << "migMemorySlices" << YAML::Value << t.mig_memory_slices;
  }
  if (t.mig_profiles.empty()) return;
  out << YAML::Key << "migProfiles" << YAML::Value << YAML::BeginSeq;
  for (const MigProfileSpec& p : t.mig_profiles) {
    out << YAML::BeginMap << YAML::Key << "name" << YAML::Value << p.name;
    out << YAML::Key << "computeSlices" << YAML::Value << p.compute_slices;
    out << YAML::Key << "memorySlices" << YAML::Value << p.memory_slices;
    out << YAML::Key << "starts" << YAML::Value << YAML::Flow << p.starts;
    out << YAML::EndMap;
  }
  out << YAML::EndSeq;
}

}  // namespace

std::string ClusterSpecToYaml(const ClusterSpec& spec) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  out << YAML::Key << "physicalCluster" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "cellTypes" << YAML::Value << YAML::BeginMap;
  for (const CellTypeSpec& type : spec.cell_types) {
    out << YAML::Key << type.name << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "childCellType" << YAML::Value << type.child_cell_type;
    out << YAML::Key << "childCellNumber" << YAML::Value << type.child_cell_number;
    if (type.is_node_level) out << YAML::Key << "isNodeLevel" << YAML::Value << true;
    out << YAML::EndMap;
  }
  out << YAML::EndMap;
  out << YAML::Key << "physicalCells" << YAML::Value << YAML::BeginSeq;
  for (const PhysicalCellSpec& cell : spec.physical_cells) WritePhysicalCell(out, cell);
  out << YAML::EndSeq;
  if (!spec.leaf_cell_types.empty()) {
    out << YAML::Key << "leafCellTypes" << YAML::Value << YAML::BeginMap;
    for (const LeafCellTypeSpec& t : spec.leaf_cell_types) {
      out << YAML::Key << t.name << YAML::Value << YAML::BeginMap;
      if (t.gpu_memory_mib != 0) {
        out << YAML::Key << "gpuMemoryMiB" << YAML::Value << t.gpu_memory_mib;
      }
      out << YAML::Key << "sharingMode" << YAML::Value << SharingModeName(t.sharing);
      WriteMigKeys(out, t);
      out << YAML::EndMap;
    }
    out << YAML::EndMap;
  }
  out << YAML::EndMap;

  out << YAML::Key << "virtualClusters" << YAML::Value << YAML::BeginMap;
  for (const VirtualClusterSpec& vc : spec.virtual_clusters) {
    out << YAML::Key << vc.name << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "virtualCells" << YAML::Value << YAML::BeginSeq;
    for (const VirtualCellSpec& cell : vc.virtual_cells) {
      out << YAML::BeginMap;
      out << YAML::Key << "cellType" << YAML::Value << cell.cell_type;
      out << YAML::Key << "cellNumber" << YAML::Value << cell.cell_number;
      out << YAML::EndMap;
    }
    out << YAML::EndSeq;
    if (!vc.pinned_cells.empty()) {
      out << YAML::Key << "pinnedCells" << YAML::Value << YAML::BeginSeq;
      for (const PinnedCellSpec& pin : vc.pinned_cells) {
        out << YAML::BeginMap << YAML::Key << "pinnedCellId" << YAML::Value << pin.pinned_cell_id
            << YAML::EndMap;
      }
      out << YAML::EndSeq;
    }
    out << YAML::EndMap;
  }
  out << YAML::EndMap;
  out << YAML::EndMap;
  std::string text = out.c_str();
  text += "\n";
  return text;
}

}  // namespace hived
