#pragma once
/// \file generators.hpp
/// Built-in structured mesh generators. Quadrilateral cells are split into two triangles for T3
/// and T6; higher-order nodes sit on a refined lattice of the cell's parameter space, so curved
/// boundaries are followed exactly. Radial grading is geometric: each cell is `grading` times the
/// size of the previous one, moving outward.
#include "fegpu/mesh/mesh.hpp"

namespace fegpu {

/// nx x ny cells on [x0, x0+lx] x [y0, y0+ly]; side and node sets left, right, bottom, top.
/// Triangles split every cell along the same diagonal, or with `alternate` along alternating
/// diagonals (a chevron pattern with no preferred direction, for crack paths). Shell4 gives a
/// flat plate in 3D (z = 0).
HostMesh generate_rectangle(ElementType type, int nx, int ny, double lx, double ly, double x0 = 0, double y0 = 0,
                            bool alternate = false);

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
inline int elements_per_cell(ElementType t) { return (t == ElementType::Tri3 || t == ElementType::Tri6) ? 2 : 1; }

} // namespace fegpu
