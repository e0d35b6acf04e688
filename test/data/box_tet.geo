// A box 1 x 0.4 x 0.2 in tetrahedra (test/test_solid3d.cpp, test_exodus.cpp): the physical volume
// "solid", its six faces as physical surfaces, one edge and one corner as node sets.
// gmsh -3 -order 1 box_tet.geo -o box_tet4.msh ; gmsh -3 -order 2 box_tet.geo -o box_tet10.msh
SetFactory("OpenCASCADE");
Box(1) = {0, 0, 0, 1.0, 0.4, 0.2};
Mesh.MeshSizeMax = 0.12;
Mesh.MshFileVersion = 4.1;
Physical Volume("solid") = {1};
Physical Surface("left") = {1};
Physical Surface("right") = {2};
Physical Surface("bottom") = {3};
Physical Surface("top") = {4};
Physical Surface("back") = {5};
Physical Surface("front") = {6};
Physical Curve("edge") = {1};
Physical Point("origin") = {1};
