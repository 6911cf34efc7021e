"""A VLMEvalKit video dataset class for a TSV written by the annotator's ``export_qa --format vlmevalkit``
(README: Export formats). The export copies this file beside the TSV as ``vlmevalkit_dataset.py``.

VLMEvalKit's generic path reads an unknown TSV as a text-only (image) MCQ task, so the clips would
never reach the model. This class is a ``VideoBaseDataset`` (Video-MCQ) over the TSV beside it:
each item's clip (``video_path``, relative to this folder; for an item whose options are videos, each
labelled clip in order, ``medias``) goes to a video model as a video, or as frames to an image model.
Use it from Python::

    import sys; sys.path.insert(0, "EXPORT_FOLDER")
    import vlmeval.dataset
    from vlmevalkit_dataset import AnnotatorVideoMCQ
    vlmeval.dataset.AnnotatorVideoMCQ = AnnotatorVideoMCQ  # so a run config can name the class
    dataset = AnnotatorVideoMCQ("qa")                      # the TSV's name without .tsv

``evaluate`` scores the predictions file by the letter VLMEvalKit's ``can_infer`` reads in each
answer and returns the accuracy overall, per QA type (``category``) and per type and condition.
The functions above the class need only pandas (tested by the platform without VLMEvalKit).
"""

import ast
import os
import os.path as osp

import pandas as pd

HERE = osp.dirname(osp.abspath(__file__))
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
MC_PROMPT = "Answer with the option's letter from the given choices directly."


def _text(value):
    """A cell as text: VLMEvalKit's ``load`` reads an empty cell as NaN."""
    return value if isinstance(value, str) else ""


def read_table(path):
    """The TSV as VLMEvalKit reads it (``pd.read_csv(sep="\\t")``), empty cells as ""."""
    return pd.read_csv(path, sep="\t", keep_default_na=False)


def options_of(line):
    """The item's options as {letter: text}, from ``candidates`` ("A. text", ...)."""
    out = {}
    for candidate in ast.literal_eval(str(line["candidates"])):
        letter, _, text = str(candidate).partition(". ")
        out[letter] = text
    return out


def video_paths(line, root):
    """The item's clips as absolute paths under ``root``: each labelled clip for an item whose options
    are videos (``medias``), else its ``video_path``. Raises FileNotFoundError when the TSV was written
    without ``--with-media``."""
    medias = ast.literal_eval(_text(line["medias"]) or "[]")
    paths = [m["video_path"] for m in medias] if medias else [_text(line["video_path"])]
    if not all(paths):
        raise FileNotFoundError(f"item {line['index']} (QA {line['qa_id']}) has no clip: export with --with-media DIR")
    return [osp.normpath(osp.join(root, p)) for p in paths]


def build_message(line, root, video_llm=True, frames=None):
    """VLMEvalKit's message for one TSV row: the clip(s) (``type: video``, or ``frames`` images for an
    image model), then the question with its lettered options and the letter instruction. Labelled
    clips are introduced by their label ("Video 1:")."""
    message = []
    medias = ast.literal_eval(_text(line["medias"]) or "[]")
    paths = video_paths(line, root)
    if video_llm:
        for i, path in enumerate(paths):
            if medias:
                message.append(dict(type="text", value=f"Video {i + 1}:"))
            message.append(dict(type="video", value=path))
    else:
        message += [dict(type="image", value=frame) for frame in frames or []]
    options = "\n".join(f"{k}. {v}" for k, v in options_of(line).items())
    message.append(dict(type="text", value=f"{line['question']}\n{options}\n{MC_PROMPT}"))
    return message


def accuracy_table(data, extract):
    """Accuracy of a predictions table (the TSV's columns plus ``prediction``): ``extract(prediction,
    {letter: text})`` reads a letter; returns rows (``category``, ``condition``, ``n``, ``accuracy``) for
    all items ("Overall", ""), each category (""), and each category and condition."""
    data = data.copy()
    data["condition"] = data["condition"].fillna("").astype(str)
    data["hit"] = [
        float(extract(str(row["prediction"]), options_of(row)) == row["answer"]) for _, row in data.iterrows()
    ]
    rows = [("Overall", "", len(data), data["hit"].mean())]
    for category, part in data.groupby("category", sort=True):
        rows.append((category, "", len(part), part["hit"].mean()))
        for condition, cell in part.groupby("condition", sort=True):
            if condition:
                rows.append((category, condition, len(cell), cell["hit"].mean()))
    return pd.DataFrame(rows, columns=["category", "condition", "n", "accuracy"])


try:  # the class needs VLMEvalKit; the functions above do not
    from vlmeval.dataset.video_base import VideoBaseDataset
except ImportError:  # pragma: no cover - exercised where VLMEvalKit is installed
    VideoBaseDataset = None

if VideoBaseDataset is not None:

    class AnnotatorVideoMCQ(VideoBaseDataset):
        """The exported TSV beside this file as a VLMEvalKit Video-MCQ dataset (see the module docstring)."""

        TYPE = "Video-MCQ"
        MODALITY = "VIDEO"

        def __init__(self, dataset="qa", **kwargs):
            super().__init__(dataset=dataset, **kwargs)
            clips = [p for p in map(_text, self.data["video_path"]) if p]
            # Frames are cut by the base class from data_root/<video>.mp4: the folder of the clips.
            self.data_root = osp.dirname(osp.join(HERE, clips[0])) if clips else HERE

        @classmethod
        def supported_datasets(cls):
            return sorted(f[:-4] for f in os.listdir(HERE) if f.endswith(".tsv"))

        def prepare_dataset(self, dataset):
            data_file = osp.join(HERE, f"{dataset}.tsv")
            if not osp.isfile(data_file):
                raise FileNotFoundError(f"no {dataset}.tsv beside {__file__}")
            return dict(root=HERE, data_file=data_file)

        def build_prompt(self, line, video_llm):
            if isinstance(line, int):
                line = self.data.iloc[line]
            frames = None if video_llm else self.save_video_frames(line["video"])
            return build_message(line, HERE, video_llm=video_llm, frames=frames)

        def evaluate(self, eval_file, **judge_kwargs):
            from vlmeval.smp import dump, load
            from vlmeval.utils import can_infer

            table = accuracy_table(load(eval_file), can_infer)
            dump(table, eval_file.rsplit(".", 1)[0] + "_acc.csv")
            return table
