"""VUDG per domain (seed 004 Sec. 3.4 and Tables 3-5): multiple-choice accuracy, and the judge's
accuracy and relevance scores (0-5) of open answers."""

from annotator.reports.presets import Preset, Table, register

register(
    Preset(
        name="vudg",
        title="VUDG: per domain, accuracy and relevance",
        source="VUDG (seed 004), Sec. 3.4, Tables 3-5",
        tables=(Table("Per domain", ("domain",), ("accuracy", "judge_accuracy_score", "judge_relevance_score")),),
    )
)
