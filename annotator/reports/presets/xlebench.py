"""X-LeBench Table 5 (seed 002 Sec. 4.2): each task by life-log length (short, medium, long, and the
"all" row the paper adds)."""

from annotator.reports.presets import Preset, Table, register

register(
    Preset(
        name="xlebench",
        title="X-LeBench: task by life-log length",
        source="X-LeBench (seed 002), Table 5",
        tables=(
            Table(
                "Task by life-log length",
                ("qa_type", "log_length"),
                ("accuracy", "position_accuracy", "kendall_tau_b", "judge_score"),
                order={"log_length": ["short", "medium", "long"]},
            ),
        ),
    )
)
