"""QA type presets. EgoNight's 12 QA types (seed 000 Sec. 3.2 and Table 8): eight *paired* types,
asked of both videos of a day-night pair, and four *unpaired* ones, asked of the night video only.
Clip policy follows the paper: 3 s windows for static or spatial types, the whole video for
dynamic or temporal ones."""

from __future__ import annotations

from dataclasses import dataclass

WINDOW_S = 3.0


@dataclass(frozen=True)
class QATypeSpec:
    slug: str
    name: str
    paired: bool
    clip_policy: str  # "window" or "whole"
    description: str

    @property
    def window_s(self) -> float | None:
        return WINDOW_S if self.clip_policy == "window" else None


EGONIGHT = [
    QATypeSpec(
        "object_recognition",
        "Object recognition",
        True,
        "window",
        'Identify and recognise specific objects in the scene (e.g. "What is on the table?").',
    ),
    QATypeSpec(
        "text_recognition",
        "Text recognition",
        True,
        "window",
        'Read visible text or logos (e.g. "What does the sign say?").',
    ),
    QATypeSpec(
        "spatial_reasoning",
        "Spatial reasoning",
        True,
        "window",
        'Spatial relations between objects (e.g. "What is left of the chair?").',
    ),
    QATypeSpec(
        "scene_sequence",
        "Scene sequence",
        True,
        "whole",
        'The temporal order of visited scenes (e.g. "Which room did I enter after the kitchen?").',
    ),
    QATypeSpec(
        "navigation",
        "Navigation",
        True,
        "whole",
        'Act as a navigation assistant after the whole video (e.g. "How can I reach place B from place A?").',
    ),
    QATypeSpec(
        "counting_statics",
        "Counting of statics",
        True,
        "window",
        'Count static objects in view (e.g. "How many chairs are in the room?").',
    ),
    QATypeSpec(
        "action_recognition",
        "Action recognition",
        True,
        "whole",
        'Human actions or interactions (e.g. "What action is being performed?").',
    ),
    QATypeSpec(
        "non_common_sense",
        "Non-common-sense reasoning",
        True,
        "window",
        'Unusual or physically implausible cases (e.g. "Is the door embedded inside the wall?").',
    ),
    QATypeSpec(
        "lighting_recognition",
        "Lighting recognition",
        False,
        "window",
        'The illumination source, including counting (e.g. "How many light sources are in the room?").',
    ),
    QATypeSpec(
        "lighting_change",
        "Lighting change",
        False,
        "whole",
        'Changes in lighting (e.g. "Did the light turn off during the clip?").',
    ),
    QATypeSpec(
        "dynamic_detection",
        "Dynamic detection",
        False,
        "whole",
        'Moving objects (e.g. "Is a car or person moving across the scene?").',
    ),
    QATypeSpec(
        "counting_dynamics",
        "Counting of dynamics",
        False,
        "whole",
        'Count dynamic objects or events (e.g. "How many people walked by?").',
    ),
]

PRESETS = {"egonight": EGONIGHT}
