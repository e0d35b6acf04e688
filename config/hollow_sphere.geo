// A hollow sphere (outer radius 5 mm, wall 0.5 mm) for config/hollow_sphere.yaml: four-node
// tetrahedra of about 0.3 mm. Remake the committed mesh with Gmsh 4 (Debian's gmsh package):
//   gmsh -3 -format msh41 config/hollow_sphere.geo -o config/hollow_sphere.msh
SetFactory("OpenCASCADE");
Sphere(1) = {0, 0, 0, 5e-3};
Sphere(2) = {0, 0, 0, 4.5e-3};
BooleanDifference(3) = {Volume{1}; Delete;}{Volume{2}; Delete;};
Physical Volume("shell") = {3};
Mesh.MeshSizeMin = 3e-4;
Mesh.MeshSizeMax = 3e-4;
Mesh.Binary = 0;
Mesh.Optimize = 1;
Mesh.OptimizeNetgen = 1;
