"""EgoExoBench's human performance beside models (seed 001 Sec. 4 and App. A.5): multiple-choice
accuracy per subtask, people at the 1-minute ("quick") and 3-minute ("deliberate") limits in their
own columns, beside every model."""

from annotator.reports.presets import Preset, Table, register

register(
    Preset(
        name="egoexobench",
        title="EgoExoBench: accuracy per subtask, humans at 1 and 3 min beside models",
        source="EgoExoBench (seed 001), Sec. 4 and App. A.5",
        tables=(Table("Accuracy per subtask", ("qa_type",), ("accuracy",), human_by=("time_limit",)),),
    )
)
