"""The demo's model server: an OpenAI-compatible endpoint on loopback with CANNED answers.

There is no model in the demo (no network, no GPU): this server answers every stage of the
drafting pipelines, the evaluated model and the judge with fixed, plausible texts chosen by a hash
of the request, in the shape each stage's JSON Schema asks for. It exists so that ``make demo``
shows runs, calls, costs, model flags, the leaderboard and the re-judge queue working end to end;
its answers say nothing about the footage. Point a project's model server at a real endpoint
(``manage.py model_server``) for real drafts.

    .venv/bin/python demo/model_server.py --port 8011
"""

from __future__ import annotations

import argparse
import hashlib
import re
import signal
import sys
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.fake_model_server import FakeModelServer, user_text  # noqa: E402

VUDG_ITEMS = [
    {
        "category": "action",
        "question": "What does the camera wearer do with their hands?",
        "answer": "Picks up an object",
    },
    {"category": "attribute", "question": "What colour is the largest object in view?", "answer": "Grey"},
    {"category": "object", "question": "Which object is closest to the camera?", "answer": "A table"},
    {"category": "temporal", "question": "What happens first in the video?", "answer": "The camera turns left"},
    {"category": "temporal", "question": "What happens at the end of the video?", "answer": "The camera stops moving"},
]
DISTRACTORS = [
    "A bicycle leaning on a wall",
    "Somebody opening a window slowly",
    "Bright green paint",
    "A dog running past",
    "Water pouring into a sink",
    "Nobody is visible at any point in this scene",
]


def _pick(body: dict, n: int) -> int:
    return int(hashlib.sha256(user_text(body).encode()).hexdigest()[:8], 16) % n


def _numbered(body: dict) -> list[str]:
    return re.findall(r"^\d+\. (.*)$", user_text(body), flags=re.MULTILINE)


def _qa_type(body: dict) -> str:
    found = re.search(r"QA type: ([^.\n]+)", user_text(body))
    return found.group(1).strip().lower() if found else "this clip"


def _distractors(body: dict) -> dict:
    found = re.search(r"^Answer: (.*)$", user_text(body), flags=re.MULTILINE)
    correct = (found.group(1) if found else "Picks up an object").strip()
    words = set(re.findall(r"\w+", correct.lower()))
    pool = [
        d for d in DISTRACTORS if not set(re.findall(r"\w+", d.lower())) <= words and d.lower() not in correct.lower()
    ]
    chosen = pool[:5]
    longest = max(len(d) for d in chosen)
    if len(correct) > longest:  # VUDG App. J.2: the correct option must not be the longest
        chosen[-1] = chosen[-1] + ", seen only briefly" * (1 + (len(correct) - longest) // 18)
    return {"correct": correct, "distractors": chosen}


def _reviews(body: dict) -> dict:
    n = len(_numbered(body)) or 5
    labels = {
        2: ("fixable", "The answer is vague; name the object."),
        5: ("invalid", "The end of the video is not shown."),
    }
    return {
        "reviews": [
            {
                "item": i,
                "label": labels.get(i, ("correct", ""))[0],
                "reason": labels.get(i, ("", "Matches the frames."))[1],
                "suggested_answer": "",
            }
            for i in range(1, n + 1)
        ]
    }


def _free_text(body: dict) -> str:
    text = user_text(body)
    shown = re.search(r"You are shown (\d+) (?:frames|texts)", text)
    if shown:  # an ordering item (EGO-FLIGHT App. G's answer line): the shown order, two neighbours swapped by hash
        order = list(range(1, int(shown.group(1)) + 1))
        i = _pick(body, max(1, len(order) - 1))
        if len(order) > 1 and _pick(body, 3):
            order[i], order[i + 1] = order[i + 1], order[i]
        return "The frames show the same scene. The correct temporal order is: " + ", ".join(map(str, order))
    if "Reply with the score alone" in text:  # a Likert item
        return str([4, 3, 5, 2, 4][_pick(body, 5)])
    if "Options:" in text:
        letters = re.findall(r"^([A-Z])\. ", text, flags=re.MULTILINE)
        return letters[_pick(body, len(letters))] if letters else "A"
    return ["A table", "Grey", "The camera turns left", "I cannot tell from the video"][_pick(body, 4)]


def _judge(body: dict) -> dict:
    score = [5, 4, 0, 2, 5, 1][_pick(body, 6)]
    if "relevance_score" in body["response_format"]["json_schema"]["schema"].get("properties", {}):  # VUDG rubric
        return {"accuracy_score": score, "relevance_score": min(5, score + 1), "reason": "Canned demo judgement."}
    return {"pred": "correct" if score >= 3 else "incorrect", "score": score, "reason": "Canned demo judgement."}


def canned_server(port: int = 0) -> FakeModelServer:
    """A FakeModelServer answering every stage with canned texts (see the module docstring)."""
    server = FakeModelServer(port=port, keep_requests=False)
    server.responders.update(
        {
            "caption": lambda body: {
                "caption": f"A dim egocentric view; the frames show the scene relevant to {_qa_type(body)}."
            },
            "questions": lambda body: {
                "questions": [
                    f"What {_qa_type(body)} detail is visible in this clip?",
                    f"What changes in this clip regarding {_qa_type(body)}?",
                ]
            },
            "answer": lambda body: {
                "answers": [["A table near the wall", "Nothing changes"][i % 2] for i, _ in enumerate(_numbered(body))]
            },
            "vudg_open": lambda body: {"items": VUDG_ITEMS},
            "vudg_distractors": _distractors,
            "vudg_review": _reviews,
            "consistency_check": lambda body: {
                "label": "consistent",
                "reason": "Matches the annotations.",
                "also_correct": [],
            },
            "text_only": lambda body: {"answer": "ABCD"[_pick(body, 4)]},
            "judge": _judge,
            "": _free_text,
        }
    )
    return server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8011)
    args = parser.parse_args()
    server = canned_server(args.port)
    print(f"demo model server (canned answers) at {server.base_url}", flush=True)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    stop.wait()
    server.close()


if __name__ == "__main__":
    main()
