"""Nothing of the run is decided here any more: the final report's frame and the rules it rests
on (who contributed, the completeness record, the snapshots' check) are evidence/finalreport.py.
This name stays only for hosts/flow.py, which reads `report.contributions` until it imports
evidence.finalreport itself; then this module goes."""

from __future__ import annotations

from council.evidence.finalreport import contributions

__all__ = ["contributions"]
