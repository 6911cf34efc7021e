"""Issue 11 in the demo: an ego-exo set, a life log over a day with a long (HLS) part, QA types
asked of them, their drafts, and a summary-ordering study. Every step reuses what is there.

The demo footage has no real multi-view recording, so the ego-exo set is **synthetic**: three crops
of the one campus camera (``vtest.avi``), cut to start at different times so that the set's sync
offsets are real, and ingested as ``source=synthetic``. The long part is the same footage, scaled
down and looped past ``MEDIA_HLS_MIN_DURATION_S`` so that it gets an HLS rendition.
"""

from __future__ import annotations

import json
from pathlib import Path

from django.conf import settings
from django.core.management import call_command

from annotator.adapters import ffmpeg
from annotator.media.lifelogs import LifeLogError, build_life_log, clock, log_start, read_manifest
from annotator.media.models import Video, VideoGroup
from annotator.media.services import make_ego_exo_set
from annotator.qa.models import QAPair, QAType

CAMPUS = "vtest.avi"  # the demo's campus camera; without it, the manifest's first file stands in
# name, crop filter, start in the source (s), view: exo time = ego time + (ego start - exo start).
VIEWS = [
    ("campus-ego.mp4", "crop=iw/2:ih/2:iw/4:ih/3", 0.0, "ego"),
    ("campus-exo-left.mp4", "crop=iw/2:ih:0:0", 0.5, "exo"),
    ("campus-exo-right.mp4", "crop=iw/2:ih:iw/2:0", 1.0, "exo"),
]
LONG = "campus-long.mp4"
SET_NAME = "campus (synthetic views)"
LOG_NAME = "demo day"
# Wall-clock starts of the life log's parts on its day: the manifest's files in order, the long
# video (when made) second.
LOG_DAY = "2024-05-14"
LOG_TIMES = ["07:42:10", "09:05:00", "12:31:40", "15:05:20", "18:20:00", "21:40:30", "22:30:00", "23:10:00"]
SET_TYPE, LOG_TYPE = "egoexo-view-match", "lifelog-when"


def _make_footage(src: Path, work: Path, stdout, *, long_video: bool) -> None:
    """Write the three crops of ``src`` and (with ``long_video``) the long looped video into
    ``work``; files already there are kept."""
    timeout = 600
    for name, crop, start, _view in VIEWS:
        out = work / name
        if not out.exists():
            ffmpeg.run(
                [
                    "ffmpeg",
                    "-nostdin",
                    "-y",
                    "-loglevel",
                    "error",
                    "-ss",
                    f"{start}",
                    "-i",
                    str(src),
                    "-vf",
                    f"{crop},scale=trunc(iw/2)*2:trunc(ih/2)*2",
                    "-c:v",
                    "libx264",
                    "-preset",
                    "veryfast",
                    "-an",
                    str(out),
                ],
                timeout_s=timeout,
                what=f"demo view {name}",
            )
    long_out = work / LONG
    if long_video and not long_out.exists():
        small = work / "campus-small.mp4"
        ffmpeg.run(
            [
                "ffmpeg",
                "-nostdin",
                "-y",
                "-loglevel",
                "error",
                "-i",
                str(src),
                "-vf",
                "scale=320:-2",
                "-c:v",
                "libx264",
                "-preset",
                "veryfast",
                "-an",
                str(small),
            ],
            timeout_s=timeout,
            what="demo long",
        )
        seconds = ffmpeg.probe(small).duration_s or 1.0
        loops = int(settings.MEDIA_HLS_MIN_DURATION_S // seconds) + 1
        ffmpeg.run(
            [
                "ffmpeg",
                "-nostdin",
                "-y",
                "-loglevel",
                "error",
                "-stream_loop",
                str(loops),
                "-i",
                str(small),
                "-c",
                "copy",
                str(long_out),
            ],
            timeout_s=timeout,
            what="demo long",
        )
        small.unlink()
        stdout.write(f"demo: made {LONG} ({(loops + 1) * seconds / 60:.0f} min, for HLS)")


def _write_manifest(work: Path, annotations: dict, source: str) -> Path:
    campus = annotations.get(source, {})
    rows = [
        {
            "file": name,
            "source": "synthetic",
            "illumination": "day",
            "domain": campus.get("domain", ""),
            "scenario": f"{campus.get('scenario', '')} ({'crop' if view != 'exo' else view + ' crop'} of {source})",
            "view": view,
            "derived_from": source,
            "start_in_source_s": start,
        }
        for name, _crop, start, view in VIEWS
    ]
    if (work / LONG).exists():
        rows.append(
            {
                "file": LONG,
                "source": "synthetic",
                "illumination": "day",
                "domain": campus.get("domain", ""),
                "scenario": f"{campus.get('scenario', '')}, looped",
                "view": "exo",
                "derived_from": source,
            }
        )
    path = work / "manifest.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _drafts_file(work: Path, project, log: VideoGroup, annotations: dict) -> Path:
    """Import rows: a video-option item on the ego-exo set (EgoExoBench seed 001 Fig. 2) and one
    "when did ..." item per annotated action of the life log's parts (X-LeBench seed 002 App. C.1),
    the answer an interval in the log's virtual seconds."""
    span = (
        min(
            Video.objects.filter(project=project, filename__in=[v[0] for v in VIEWS]).values_list(
                "duration_s", flat=True
            )
        )
        - 1.0
    )
    query = (round(span * 0.1, 1), round(span * 0.25, 1))
    shift = VIEWS[2][2] - VIEWS[0][2]  # the right view started this much later: the same moment is this much earlier

    def at(fraction_from, fraction_to):
        return {"start_s": round(span * fraction_from, 1), "end_s": round(span * fraction_to, 1)}

    rows = [
        {
            "video": VIEWS[0][0],
            "qa_type": SET_TYPE,
            "id": "demo-egoexo-1",
            "question": "Video 1 is the close view. Which video shows the same moment from another camera?",
            "clip_start_s": query[0],
            "clip_end_s": query[1],
            "videos": [
                {"label": "Video 1", "video": VIEWS[0][0], "role": "query", "start_s": query[0], "end_s": query[1]},
                {"label": "Video 2", "video": VIEWS[1][0], "role": "candidate", **at(0.5, 0.65)},
                {
                    "label": "Video 3",
                    "video": VIEWS[2][0],
                    "role": "candidate",
                    "start_s": query[0] - shift,
                    "end_s": query[1] - shift,
                },
                {"label": "Video 4", "video": VIEWS[1][0], "role": "candidate", **at(0.75, 0.9)},
            ],
            "options": ["Video 2", "Video 3", "Video 4"],
            "answer_index": 1,
            "answer": "Video 3",
        }
    ]
    first = log.members.order_by("position").first().video
    day_start = log_start(log)
    for member in log.members.select_related("video").order_by("position"):
        for k, action in enumerate(annotations.get(member.video.filename, {}).get("actions") or []):
            start, end = float(action["start_s"]), float(action["end_s"])
            if end <= start:
                continue
            rows.append(
                {
                    "video": first.filename,
                    "qa_type": LOG_TYPE,
                    "id": f"demo-lifelog-{member.position}-{k}",
                    "question": f"When did this happen: {action['label']}?",
                    "answer": f"from {clock(day_start, member.offset_s + start)} to {clock(day_start, member.offset_s + end)}",
                    "answer_start_s": member.offset_s + start,
                    "answer_end_s": member.offset_s + end,
                }
            )
    path = work / "drafts.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def long_and_multiview(project, footage: str, manifest: str, out: dict, *, long_video: bool = True) -> None:
    """Issue 11's demo data in ``project`` (see the module docstring); needs a Celery worker.
    ``long_video=False`` leaves out the long (HLS) part, which takes a minute or two to transcode."""
    stdout = out["stdout"]
    work = Path(footage).resolve().parent / "demo-derived"
    work.mkdir(parents=True, exist_ok=True)
    annotations = {}
    for line in Path(manifest).read_text().splitlines():
        if line.strip():
            row = json.loads(line)
            annotations[row["file"]] = {
                **row.get("annotations", {}),
                "domain": row.get("domain", ""),
                "scenario": row.get("scenario", ""),
            }
    files = [name for name in annotations if (Path(footage) / name).exists()]
    source = CAMPUS if CAMPUS in files else files[0]
    _make_footage(Path(footage) / source, work, stdout, long_video=long_video)
    call_command(
        "ingest",
        str(work),
        project=project.slug,
        manifest=str(_write_manifest(work, annotations, source)),
        wait=True,
        **out,
    )
    # Thumbnails (and HLS where long) for videos transcoded before they existed; a no-op after.
    call_command("media_backfill", project=project.slug, **out)

    videos = {v.filename: v for v in Video.objects.filter(project=project, filename__in=[v[0] for v in VIEWS])}
    ego = videos[VIEWS[0][0]]
    exos = [(videos[name], VIEWS[0][2] - start) for name, _c, start, view in VIEWS if view == "exo"]
    group = make_ego_exo_set(ego, exos, name=SET_NAME, params={"synthetic": True, "from": source})
    stdout.write(f"ego-exo set {group.name!r}: {group.members.count()} views")

    parts = work / "lifelog.jsonl"
    names = files[:1] + ([LONG] if (work / LONG).exists() else []) + files[1:]
    # The long take is the source's footage again: it gets no summary of its own, since the source's
    # text twice in one log makes the summary-ordering item ambiguous, and the build refuses it (a
    # fresh `make demo` stopped there: "no items could be built for this ordering study").
    parts.write_text(
        "".join(
            json.dumps(
                {
                    "file": name,
                    "start": f"{LOG_DAY}T{at}",
                    "summary": "" if name == LONG else annotations.get(name, {}).get("description", ""),
                }
            )
            + "\n"
            for name, at in zip(names, LOG_TIMES)
        )
    )
    try:
        result = build_life_log(project, LOG_NAME, read_manifest(parts))
        stdout.write(f"life log {LOG_NAME!r}: {result.outcome}")
    except LifeLogError as exc:
        stdout.write(f"life log {LOG_NAME!r} not built: {exc}")
        return
    log = VideoGroup.objects.get(project=project, kind=VideoGroup.Kind.LIFE_LOG, name=LOG_NAME)

    # The descriptions are what annotators read: no paper references (issue 21). The set type is
    # EgoExoBench's view matching (seed 001 Sec. 3); the log type X-LeBench's temporal localisation
    # (seed 002 App. C.1).
    QAType.objects.get_or_create(
        project=project,
        slug=SET_TYPE,
        defaults={
            "name": "Ego-exo view matching",
            "set_kind": QAType.SetKind.EGO_EXO,
            "clip_policy": QAType.ClipPolicy.GIVEN,
            "description": "Which candidate video shows the query's moment from another view.",
        },
    )
    QAType.objects.get_or_create(
        project=project,
        slug=LOG_TYPE,
        defaults={
            "name": "Temporal localisation (life log)",
            "set_kind": QAType.SetKind.LIFE_LOG,
            "answer_kind": QAType.AnswerKind.INTERVAL,
            "clip_policy": QAType.ClipPolicy.WHOLE,
            "description": "When in the day did the event happen?",
        },
    )
    if not QAPair.objects.filter(project=project, qa_type__slug__in=[SET_TYPE, LOG_TYPE]).exists():
        try:
            call_command(
                "draft",
                project=project.slug,
                pipeline="import",
                file=str(_drafts_file(work, project, log, annotations)),
                **out,
            )
        except SystemExit:
            stdout.write("the demo's set and life-log drafts had failures; see the runs page")
    summaries = [t for t in log.params.get("summaries") or [] if t]
    if len(summaries) >= 4:  # the preset's smallest condition orders 4 summaries (X-LeBench App. C.4)
        call_command(
            "study_create",
            "--project",
            project.slug,
            "--kind",
            "ordering",
            "--name",
            "xlebench-summary",
            "--preset",
            "xlebench-summary",
            "--skip-existing",
            **out,
        )
    else:
        stdout.write(f"no summary-ordering study: the life log has {len(summaries)} part summaries, 4 needed")
