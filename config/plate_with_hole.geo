// A quarter of a square plate (2 L x 2 L) with a central circular hole of radius a, for
// config/plate_with_hole.yaml: six-node triangles, graded from a / 12 at the hole to L / 12 at the
// far edges. Physical groups name the parts the input refers to (symmetry planes, loaded edge, hole).
// Remake the committed mesh with Gmsh 4 (Debian's gmsh package):
//   gmsh -2 -order 2 -format msh41 config/plate_with_hole.geo -o config/plate_with_hole.msh
L = 1.0;
a = 0.1;
Point(1) = {a, 0, 0, a / 12};
Point(2) = {L, 0, 0, L / 12};
Point(3) = {L, L, 0, L / 12};
Point(4) = {0, L, 0, L / 12};
Point(5) = {0, a, 0, a / 12};
Point(6) = {0, 0, 0};
Line(1) = {1, 2};
Line(2) = {2, 3};
Line(3) = {3, 4};
Line(4) = {4, 5};
Circle(5) = {5, 6, 1};
Curve Loop(1) = {1, 2, 3, 4, 5};
Plane Surface(1) = {1};
Physical Surface("plate") = {1};
Physical Curve("bottom") = {1};
Physical Curve("right") = {2};
Physical Curve("top") = {3};
Physical Curve("left") = {4};
Physical Curve("hole") = {5};
Physical Point("hole_top") = {5};
Mesh.ElementOrder = 2;
Mesh.SecondOrderLinear = 0;
