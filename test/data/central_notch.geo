// The 10 mm square of test_crack_paths (mode I) with a central notch of 3 mm through its centre at
// theta degrees to x (an embedded line: the notch's facets are mesh edges), unstructured
// triangles of size h (Delaunay). Sets: bottom, right, top, left (side and node sets).
//   gmsh -2 central_notch.geo -setnumber theta 30 -setnumber h 0.2e-3 -bin -format msh41 -o central_notch_30_h200.msh
//   (T6: -order 2 and the name's suffix _tri6; Gmsh 4.8.4 made the files of test/data)
DefineConstant[theta = {0, Name "theta"}, h = {0.2e-3, Name "h"}];
L = 10e-3; c = 1.5e-3; t = theta * Pi / 180;
Point(1) = {0, -L/2, 0, h}; Point(2) = {L, -L/2, 0, h}; Point(3) = {L, L/2, 0, h}; Point(4) = {0, L/2, 0, h};
Point(5) = {L/2 - c * Cos(t), -c * Sin(t), 0, h}; Point(6) = {L/2 + c * Cos(t), c * Sin(t), 0, h};
Line(1) = {1, 2}; Line(2) = {2, 3}; Line(3) = {3, 4}; Line(4) = {4, 1}; Line(5) = {5, 6};
Curve Loop(1) = {1, 2, 3, 4};
Plane Surface(1) = {1};
Line{5} In Surface{1};
Physical Surface("plate") = {1};
Physical Curve("bottom") = {1}; Physical Curve("right") = {2}; Physical Curve("top") = {3}; Physical Curve("left") = {4};
Mesh.Algorithm = 5; // Delaunay: the frontal algorithms lay rows of near-equilateral triangles, a lattice
