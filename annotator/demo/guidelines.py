"""The demo's guidelines (issue 21): what annotators read on the verify page (G), for the project
and for each of its QA types: what keep, modify and delete mean, and each type's own rules (EgoNight's
"left and right relative to the wearer"). Plain words for annotators, no paper references.

``seed_guidelines`` writes a text only where the admin has written none, so a rerun of ``make demo``
changes nothing and never overwrites an admin's edits.
"""

from __future__ import annotations

from annotator.projects.models import Project
from annotator.qa.models import QAType

PROJECT = """\
Each unit is a video (or a pair or set of videos) with questions and answers drafted by a model.
Decide each QA pair, then submit the unit.

- **Keep (V)** when the question can be answered from the clip alone and the answer is right and complete.
- **Modify (E)** when the question is worth asking but its wording or its answer is wrong or vague: fix the
  question or the answer so a viewer of the clip would agree. For a multiple-choice pair, keep exactly one
  correct option and no two options alike.
- **Delete (X)** when the pair cannot be saved, with its reason: *meaningless* (nothing in the clip answers it),
  *vague* (several answers would be right), *duplicate* (another pair of the unit asks the same),
  *inconsistent across day and night* (a day-night pair whose answer differs between the two videos),
  *wrong and unfixable*.
- **Add (N)** a QA pair the unit lacks: choose its QA type, set its clip with I and O, write the question and the answer.

Answer from what the clip shows, not from what one would guess. Times are the video's, as h:mm:ss.f.
Skip (S) a unit only when you cannot work on it (the video does not play, you cannot tell what it shows,
it is out of scope for this project); say why.
"""

# The EgoNight preset's types (annotator/qa/presets.py) and the demo's set and life-log types
# (annotator/demo/media.py), by slug.
TYPES = {
    "object_recognition": 'Name the object as a person would ("a red mug", not "a container"). Keep only if the '
    "object is visible in the clip's 3 seconds, in both videos of a day-night pair.",
    "text_recognition": "The answer is the text exactly as written (case and punctuation aside). Delete as "
    "*meaningless* when the text cannot be read in the clip.",
    "spatial_reasoning": "**Left and right are relative to the wearer** (the camera), not to the object or to a "
    'person facing the camera. "In front of" is towards where the camera looks. Modify an '
    "answer that uses the other convention.",
    "scene_sequence": "The order of the places visited over the whole video, from the wearer's path. Modify the "
    "answer if a place is missing or out of order.",
    "navigation": "Directions from the wearer's point of view, from the first place to the second (turn left, go "
    "straight), as the video shows the way taken.",
    "counting_statics": "Count what is visible in the clip, not what the room probably holds. Delete as *vague* "
    "when objects are too dark or too far to count.",
    "action_recognition": 'The action of the wearer (or of the person asked about), with its object: "opening '
    'the fridge", not "moving".',
    "non_common_sense": "Questions about something unusual in the scene. Keep only if the clip shows it clearly.",
    "lighting_recognition": "Asked of the night video only: the light sources you can see (lamps, screens, street "
    "lights), and their number when the question counts them.",
    "lighting_change": "Asked of the night video only: does the light change during the clip (a lamp switched on "
    "or off, a car's lights passing)?",
    "dynamic_detection": "Asked of the night video only: what moves in the scene, apart from the wearer.",
    "counting_dynamics": "Asked of the night video only: count moving people, vehicles or events over the whole clip.",
    "egoexo-view-match": "The options are videos of the same moment from other cameras. Keep if exactly one option "
    "shows the query's moment; left and right refer to the wearer's own view (the ego video).",
    "lifelog-when": "The answer is an interval of the day, in the log's wall clock. Check it on the timeline "
    "(Shift+I and Shift+O set its start and end at the playhead); parts not recorded are drawn as gaps.",
}


def seed_guidelines(project: Project) -> int:
    """Write the demo's guidelines where the project or a QA type has none. Returns how many texts
    were written (0 on a rerun). Types the demo does not know are left alone."""
    written = 0
    if not project.guidelines.strip():
        project.guidelines = PROJECT
        project.save(update_fields=["guidelines"])
        written += 1
    for slug, text in TYPES.items():
        written += QAType.objects.filter(project=project, slug=slug, guidelines="").update(guidelines=text)
    return written
