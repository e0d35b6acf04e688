// Kalthoff and Winkler's plate, the half above its plane of symmetry: 100 x 100 mm, a notch of
// 50 mm from the left edge at y = 25 mm (an embedded line: the notch's facets are mesh edges), the
// left edge below it struck (test_crack_paths makes that set a box). Unstructured triangles of size h (Delaunay: the frontal algorithms lay
// rows of near-equilateral triangles, a lattice). Sets: bottom, right, top, left.
//   gmsh -2 kalthoff.geo -setnumber h 1e-3 -bin -format msh41 -o kalthoff_h1000.msh
//   gmsh -2 -order 2 kalthoff.geo -setnumber h 1e-3 -bin -format msh41 -o kalthoff_h1000_tri6.msh  (T6)
DefineConstant[h = {1e-3, Name "h"}];
L = 0.1;
Point(1) = {0, 0, 0, h}; Point(2) = {L, 0, 0, h}; Point(3) = {L, L, 0, h}; Point(4) = {0, L, 0, h};
Point(5) = {0, 0.025, 0, h}; Point(6) = {0.05, 0.025, 0, h};
Line(1) = {1, 2}; Line(2) = {2, 3}; Line(3) = {3, 4}; Line(4) = {4, 5}; Line(5) = {5, 1}; Line(6) = {5, 6};
Curve Loop(1) = {1, 2, 3, 4, 5};
Plane Surface(1) = {1};
Line{6} In Surface{1};
Physical Surface("plate") = {1};
Physical Curve("bottom") = {1}; Physical Curve("right") = {2}; Physical Curve("top") = {3};
Physical Curve("left") = {4, 5};
Mesh.Algorithm = 5;
