"""The URLs a page or script uses for a video's stored files.

Every stored file goes through the access-checked view (``media.views.serve_media`` at
``/files/NAME``): on local disk it serves the bytes with ranges; on S3 it answers a 302 to a
presigned URL once access is checked (playlists and WebVTT it serves itself). A presigned URL in a
page would expire while the page is open, and a playlist fetched from one would resolve its
segments to unsigned bucket URLs.
An HLS master playlist and a thumbnails WebVTT refer to their segments, variant playlists and sprite
sheets by relative URLs, so those resolve under the same ``/files/hls/<media key>/...`` or
``/files/thumbs/<media key>/...`` prefix, which ``serve_media`` checks by the video it names.
"""

from __future__ import annotations

from django.urls import reverse


def media_url(name: str) -> str | None:
    """The URL for the stored file ``name`` (None for a blank name): ``/files/NAME``, on local disk
    and on S3 alike."""
    if not name:
        return None
    return reverse("media", args=[name])


def media_urls(video) -> dict[str, str | None]:
    """A video's media URLs: ``{"url", "poster_url", "hls_url", "thumbnails_vtt_url"}``.

    ``url`` is the MP4 rendition, ``poster_url`` its poster JPEG, ``hls_url`` the HLS master playlist
    (only for videos longer than ``MEDIA_HLS_MIN_DURATION_S``), ``thumbnails_vtt_url`` the WebVTT of
    timeline thumbnails (cues ``sprite-K.jpg#xywh=x,y,w,h``, relative to the VTT). Each is None
    when the video has no such file (not transcoded yet, a short video's HLS, or not backfilled), or
    when it lies in a folder named by the video's row id (``services.relocate`` moves it).
    ``video`` is a ``Video`` (only its ``rendition``, ``poster``, ``hls`` and ``thumbnails_vtt``
    fields are read; a ``Video(...)`` built from a raw row does).
    """
    # A file still in a folder named by the video's row id (stored before media keys, not yet moved
    # by relocate_media) is not served (media.views), and its URL would show the id: None (issue 20).
    legacy = str(getattr(video, "pk", None))

    def url(name: str) -> str | None:
        return None if name.split("/")[1:2] == [legacy] else media_url(name)

    return {
        "url": url(video.rendition.name),
        "poster_url": url(video.poster.name),
        "hls_url": url(video.hls.name),
        "thumbnails_vtt_url": url(video.thumbnails_vtt.name),
    }


__all__ = ["media_url", "media_urls"]
