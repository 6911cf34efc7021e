"""Experiment presets. EGO-FLIGHT's nine frame-ordering experiments (seed 003 App. E, Table 8);
the baseline is 4 frames, medium clips, brief annotation, no hints (Sec. 3.2)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ConditionSpec:
    number: int
    label: str
    n_frames: int
    clip_length: str
    annotation: str
    hints: tuple[int, ...] = ()
    item_kind: str = "frames"

    @property
    def baseline(self) -> bool:
        return (self.n_frames, self.clip_length, self.annotation, self.hints, self.item_kind) == (4, "medium", "brief", (), "frames")


EGO_FLIGHT = [
    ConditionSpec(1, "2 frames", 2, "medium", "brief"),
    ConditionSpec(2, "original (4 frames)", 4, "medium", "brief"),
    ConditionSpec(3, "8 frames", 8, "medium", "brief"),
    ConditionSpec(4, "short clips", 4, "short", "brief"),
    ConditionSpec(5, "long clips", 4, "long", "brief"),
    ConditionSpec(6, "no annotation", 4, "medium", "none"),
    ConditionSpec(7, "comprehensive annotation", 4, "medium", "comprehensive"),
    ConditionSpec(8, "hints: frames 1 & 3", 4, "medium", "brief", (1, 3)),
    ConditionSpec(9, "hints: frames 2 & 4", 4, "medium", "brief", (2, 4)),
]

# Ordering short texts instead of frames (X-LeBench summary ordering, seed 002 App. C.4): the
# annotated actions of a whole video, shuffled, to be put back in the order they happened.
TEXT_ORDERING = [
    ConditionSpec(1, "3 action descriptions", 3, "medium", "none", item_kind="texts"),
    ConditionSpec(2, "5 action descriptions", 5, "medium", "none", item_kind="texts"),
]

PRESETS = {"ego-flight": EGO_FLIGHT, "action-texts": TEXT_ORDERING}

# Clip windows cut from each video per length class (seed 003 Sec. 3.2: short 5-10 s, medium
# 10-25 s, long over 25 s): windows of these lengths, tiled from the start of the video.
WINDOW_S = {"short": 8.0, "medium": 15.0, "long": 30.0}
