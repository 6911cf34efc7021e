"""EgoNight Table 1 and Fig. 5 (seed 000 Sec. 4.2): OpenQA accuracy judged by an LLM (App. A.5.1),
per QA type by day and night (Fig. 5a), and per source by difficulty (Table 1: the synthetic and real
datasets at easy, medium and hard)."""

from annotator.reports.presets import Preset, Table, register

METRICS = ("judge_accuracy", "accuracy")

register(
    Preset(
        name="egonight-table1",
        title="EgoNight: QA type by day and night; source by difficulty",
        source="EgoNight (seed 000), Table 1 and Fig. 5",
        tables=(
            Table(
                "QA type by day and night",
                ("qa_type", "illumination"),
                METRICS,
                order={"illumination": ["day", "night"]},
            ),
            Table(
                "Source by difficulty",
                ("source", "difficulty"),
                METRICS,
                order={"source": ["synthetic", "real"], "difficulty": ["easy", "medium", "hard"]},
            ),
        ),
    )
)
