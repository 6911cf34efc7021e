from django.contrib import admin

from annotator.media.models import Video


@admin.register(Video)
class VideoAdmin(admin.ModelAdmin):
    list_display = ["filename", "project", "status", "duration_s", "fps", "illumination", "created_at"]
    list_filter = ["project", "status", "illumination", "source"]
    search_fields = ["filename", "sha256"]
    readonly_fields = ["sha256", "size_bytes", "original", "rendition", "poster", "error"]
