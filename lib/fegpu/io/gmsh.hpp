#pragma once
/// \file gmsh.hpp
/// Gmsh meshes: a reader of the MSH 4.1 format (ASCII and binary), written to its documentation
/// (gmsh.info, "MSH file format"), not through libgmsh: Debian's libgmsh-dev brings OpenCASCADE and
/// some hundred packages to parse a text file of a few sections, and the GPU machines, which have
/// no package registry, could not build with it at all.
///
/// Physical groups map to the mesh by name (or "physical_<tag>" when unnamed): groups of the
/// mesh's own dimension (surfaces) to element blocks; curves to a side set (the elements' edges
/// that the group's line elements cover) and a node set of the same name; points to node sets.
/// Node and element tags become the global ids. Triangles and quadrilaterals of order 1 to 3
/// (Gmsh types 2, 9, 3, 10, 36; their local numbering is the Exodus one used here); a planar mesh
/// (z = 0) is 2D, one with z varying is a shell surface of 4-node quadrilaterals. Elements that a
/// planar surface gives clockwise are turned counter-clockwise.
#include "fegpu/mesh/mesh.hpp"

#include <string>

namespace fegpu {

/// Reads a .msh file; InputError naming the file (and the line, in ASCII) on any failure.
HostMesh read_gmsh_mesh(const std::string &path);

/// Writes a mesh in MSH 4.1 ASCII (one entity per block, set and block; physical groups for
/// them by name): for tests and for handing a generated mesh to Gmsh.
void write_gmsh_mesh(const std::string &path, const HostMesh &mesh);

} // namespace fegpu
