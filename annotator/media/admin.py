from django.contrib import admin

from annotator.media.models import Video, VideoGroup, VideoGroupMember


@admin.register(Video)
class VideoAdmin(admin.ModelAdmin):
    list_display = ["filename", "project", "status", "duration_s", "fps", "illumination", "created_at"]
    list_filter = ["project", "status", "illumination", "source"]
    search_fields = ["filename", "sha256"]
    readonly_fields = ["sha256", "size_bytes", "original", "rendition", "poster", "error"]


class VideoGroupMemberInline(admin.TabularInline):
    model = VideoGroupMember
    extra = 0
    raw_id_fields = ["video"]


@admin.register(VideoGroup)
class VideoGroupAdmin(admin.ModelAdmin):
    list_display = ["name", "project", "kind", "created_at"]
    list_filter = ["project", "kind"]
    inlines = [VideoGroupMemberInline]
