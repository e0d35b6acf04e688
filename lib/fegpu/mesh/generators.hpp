#pragma once
/// \file generators.hpp
/// Built-in structured mesh generators. Quadrilateral cells are split into two triangles for T3
/// and T6; higher-order nodes sit on a refined lattice of the cell's parameter space, so curved
/// boundaries are followed exactly. Radial grading is geometric: each cell is `grading` times the
/// size of the previous one, moving outward. One generator is not structured: the rectangle of
/// triangles without a lattice (delaunay_rectangle, in delaunay.cpp).
#include "fegpu/mesh/mesh.hpp"

#include <array>
#include <vector>

namespace fegpu {

/// How a rectangle's cells are cut into triangles: all along the same diagonal; along alternating
/// diagonals (the union-jack or 4-8 pattern: every other lattice node meets eight edges, the
/// others four); or along both, four triangles about a centre node (the 4k mesh: every cell
/// corner meets eight edges, at 45 degrees). Delaunay: no cells, no lattice (delaunay_rectangle).
enum class Diagonals { Same, Alternate, Cross, Delaunay };

/// nx x ny cells on [x0, x0+lx] x [y0, y0+ly]; side and node sets left, right, bottom, top.
/// Triangles cut the cells as `diagonals` says. Shell4 gives a flat plate in 3D (z = 0). `seed`
/// and `lines` serve Delaunay alone.
HostMesh generate_rectangle(ElementType type, int nx, int ny, double lx, double ly, double x0 = 0, double y0 = 0,
                            Diagonals diagonals = Diagonals::Same, unsigned seed = 1,
                            const std::vector<std::array<double, 4>> &lines = {});

/// The rectangle of T3 or T6 without a lattice: nx and ny equal intervals along its sides and,
/// inside, a maximal Poisson-disc sample (points at least 0.70 h apart, h = min(lx/nx, ly/ny),
/// drawn from a hash of `seed`: the same mesh on every machine), triangulated by Delaunay's rule;
/// T6 mid-side nodes at the edges' middles. Its facets offer every direction, as an unstructured
/// mesher's do, so crack paths follow no row. Each of `lines` ((x0, y0, x1, y1): a notch, say)
/// is a chain of edges, as Gmsh's embedded lines are. Side sets bottom, right, top, left (no node
/// sets: generate_rectangle adds them).
HostMesh delaunay_rectangle(ElementType type, int nx, int ny, double lx, double ly, double x0, double y0, unsigned seed,
                            const std::vector<std::array<double, 4>> &lines = {});

/// nx x ny x nz cells on [x0, x0+lx] x [y0, y0+ly] x [z0, z0+lz], each cut into six tetrahedra
/// (TET4 or TET10) about one of its diagonals (Kuhn's cut), mirrored across every cell face so that
/// neighbouring cells meet face to face and the diagonals alternate: no direction is preferred
/// over its mirror image. Side and node sets left, right (x), bottom, top (y), back, front (z).
HostMesh generate_box(ElementType type, int nx, int ny, int nz, double lx, double ly, double lz, double x0 = 0,
                      double y0 = 0, double z0 = 0);

/// Moves every node off the boundary and out of every set by a random vector of length up to
/// `amplitude` times its shortest edge (uniform in the disc, or for tetrahedra the ball, from a hash
/// of the seed and the node), corner nodes first, then each mid-side node to the middle of its edge
/// (edges stay straight).
/// The nodal perturbation of Paulino, Park, Celes and Espinha (IJNME 84, 2010): a structured
/// mesh's facets then offer every direction, so crack paths stop following its lattice.
void perturb_nodes(HostMesh &h, double amplitude, unsigned seed);

/// Ring r_in <= r <= r_out, n_theta x n_r cells, over `angle_deg` degrees (360: closed ring).
/// Sets inner, outer (and start, end for a sector).
HostMesh generate_annulus(ElementType type, int n_theta, int n_r, double r_in, double r_out, double grading = 1.0,
                          double angle_deg = 360.0);

/// Disc of `radius`: a square core of (n_theta/4)^2 cells surrounded by a ring of n_theta x n_r
/// cells (an O-grid); `core` is the radius of the core's corners over `radius`. Sets outer.
/// Shell4 gives a circular plate in 3D.
HostMesh generate_disc(ElementType type, int n_theta, int n_r, double radius, double core = 0.5, double grading = 1.0);

/// Cylinder surface of radius R and length L along z in Shell4 quads, n_theta x n_z cells over
/// `angle_deg` degrees (360: closed). Sets bottom (z=0), top (z=L) and, for a panel, start, end.
HostMesh generate_cylinder(int n_theta, int n_z, double radius, double length, double angle_deg = 360.0);

/// Hemisphere of `radius` about the z axis (pole at +z) in Shell4 quads with a polar opening of
/// `hole_deg` degrees (MacNeal-Harder's 18), n_theta cells around x n_phi from the equator to the
/// opening, over `angle_deg` degrees. Sets equator, hole and, for a sector, start, end.
HostMesh generate_hemisphere(int n_theta, int n_phi, double radius, double hole_deg, double angle_deg = 360.0);

/// Element counts expected of a structured quad mesh of cells split per type.
inline int elements_per_cell(ElementType t, Diagonals d = Diagonals::Same) {
  if (element_info(t).dim == 3) return 6;
  return (t == ElementType::Tri3 || t == ElementType::Tri6) ? (d == Diagonals::Cross ? 4 : 2) : 1;
}

} // namespace fegpu
