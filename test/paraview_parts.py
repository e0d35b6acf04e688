"""ParaView (pvpython) opens the rank files of a run on many ranks as one dataset: the whole mesh's
elements, every rank's nodes (shared ones once a rank, marked as ghosts but on their owner), and
at the last frame the displacements of the one-rank run's file, node by node through the global
ids, to 1e-12 of the largest. A crack's run writes a series of files (name.e-s.0001.N.r, ...):
the last frame is the last file's, its cohesive elements among the cells.

    pvpython test/paraview_parts.py out/name.e.N.0 one/name.e
"""
import sys

from paraview import servermanager
from paraview.simple import MergeBlocks, OpenDataFile
from vtk.numpy_interface import dataset_adapter as dsa


def last_frame(path):
    reader = OpenDataFile(path)
    merged = MergeBlocks(Input=reader)
    merged.UpdatePipeline(reader.TimestepValues[-1])
    return reader, dsa.WrapDataObject(servermanager.Fetch(merged))


parts, parts_data = last_frame(sys.argv[1])
whole, whole_data = last_frame(sys.argv[2])
failures = []
if list(parts.TimestepValues) != list(whole.TimestepValues):
    failures.append("times differ")
if parts_data.GetNumberOfCells() != whole_data.GetNumberOfCells():
    failures.append("%d cells, not %d" % (parts_data.GetNumberOfCells(), whole_data.GetNumberOfCells()))
ghost = parts_data.PointData["vtkGhostType"]
ids = parts_data.PointData["ids"]
owned = {int(i) for i, g in zip(ids, ghost) if g == 0}
if sorted(owned) != sorted(int(i) for i in whole_data.PointData["ids"]):
    failures.append("the owned nodes are not the whole mesh's, once each")
reference = {int(i): u for i, u in zip(whole_data.PointData["ids"], whole_data.PointData["displacement"])}
largest = max(abs(c) for u in reference.values() for c in u)
if not largest > 0:
    sys.exit("FAIL: the one-rank run's last frame has no displacement to compare")
worst = max(abs(a - b) for i, u in zip(ids, parts_data.PointData["displacement"]) for a, b in zip(u, reference[int(i)]))
if not worst <= 1e-12 * largest:
    failures.append("displacements off by %.3g of the largest" % (worst / largest))
print("%d cells, %d points (%d owned), %d frames, displacements within %.3g of the largest"
      % (parts_data.GetNumberOfCells(), parts_data.GetNumberOfPoints(), len(owned), len(parts.TimestepValues),
         worst / largest))
for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
