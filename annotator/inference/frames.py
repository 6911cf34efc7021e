"""Frame sampling for model inputs: JPEG frames of a video at given times, and their cache identity.

Drafting pipelines and evaluations send the same frames (``FRAME_MAX_SIDE`` px on the longest
side), so a frame sampled for one is named the same way in the call cache for the other.
"""

from __future__ import annotations

import os
import threading

from annotator.adapters import ffmpeg
from annotator.media.models import Video
from annotator.media.services import local_copy

FRAME_MAX_SIDE = 512  # px, longest side of frames sent to a model
# Sampling frames is CPU work (an ffmpeg run per frame). A run starts all its jobs at once: with more
# samplers than CPUs they share the CPUs and every job's first model call waits for all of them;
# bounded, the first jobs call their model while the others sample (bench/drafting.py, C=4: ratio to
# the ideal 1.21-1.24 before, 1.15-1.18 after). Per process.
_SAMPLING = threading.BoundedSemaphore(os.cpu_count() or 2)


def frame_key(video: Video, times_s: list[float], max_side: int = FRAME_MAX_SIDE) -> str:
    """The frames' identity for the call cache: the video's sha256, the times (s) and the size (px)."""
    return f"{video.sha256}@{','.join(f'{t:.3f}' for t in times_s)}@{max_side}"


def sample_frames(video: Video, times_s: list[float], max_side: int = FRAME_MAX_SIDE) -> list[bytes]:
    """JPEG frames of ``video`` at ``times_s`` (seconds), longest side ``max_side`` px, by ffmpeg,
    at most one sampler per CPU in this process. Raises MediaError."""
    with local_copy(video.rendition.name or video.original.name) as src, _SAMPLING:
        return ffmpeg.sample_frames(src, times_s, max_side=max_side)
