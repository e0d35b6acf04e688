#pragma once
/// \file mesh_input.hpp
/// The `mesh` section: a built-in generator or an Exodus II file.
///
///   mesh: {generator: rectangle, element: tri6, nx: 40, ny: 4, lx: 1.0, ly: 0.1}
///   mesh: {generator: annulus, element: tri6, n_theta: 600, n_r: 200, inner_radius: 0.1,
///          outer_radius: 1.0, grading: 1.0, angle: 360}
///   mesh: {generator: disc, element: tri3, n_theta: 64, n_r: 8, radius: 1.0, core: 0.5}
///   mesh: {generator: cylinder, n_theta: 32, n_z: 16, radius: 1, length: 2, angle: 360}
///   mesh: {file: part.exo | part.msh}   (Exodus II or Gmsh 4.1; relative to the input file's folder)
#include "fegpu/input/input.hpp"
#include "fegpu/mesh/mesh.hpp"

#include <string>
#include <vector>

namespace fegpu {

/// Reads the input's `mesh` section; `input_file` locates relative mesh paths. `allowed` lists the
/// element types the calling module accepts (an error names them otherwise). A generated mesh is
/// checked against the program's indices, this machine's memory and, where the output names the
/// classic Exodus format, that format's limits, before it is made.
HostMesh read_mesh_section(const InputNode &root, const std::string &input_file,
                           const std::vector<ElementType> &allowed);

/// Throws at `node` (listing the sets the mesh has) unless `sets` holds one named `name`; `kind`
/// names the sets in the message ("node set", "side set").
void require_set(const InputNode &node, const std::string &name, const std::vector<HostMesh::Set> &sets,
                 const char *kind);

/// Reads a list of element-block names at `node`, each one a block of the mesh.
std::vector<std::string> read_block_names(const InputNode &node, const HostMesh &mesh);

} // namespace fegpu
