"""EGO-FLIGHT Table 1 (seed 003 Sec. 4 and App. E, Table 8): the nine frame-ordering conditions, every
ordering metric (Sec. 3.5: Kendall's tau-b, pairwise accuracy, mean absolute distance, LCS ratio, edit
distance, exact match)."""

from annotator.reports.presets import Preset, Table, register
from annotator.scoring.ordering import METRICS

register(
    Preset(
        name="ego-flight-table1",
        title="EGO-FLIGHT: the nine conditions, every ordering metric",
        source="EGO-FLIGHT (seed 003), Table 1 and App. E Table 8",
        tables=(
            Table("Ordering per condition", ("condition",), tuple(m for m in METRICS if m != "position_accuracy")),
        ),
    )
)
