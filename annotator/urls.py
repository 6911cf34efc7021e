from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path, register_converter
from health_check.views import HealthCheckView

from annotator import health
from annotator.agreement import views as agreement_views
from annotator.converters import IdConverter
from annotator.core.handles import UnitHandleConverter
from annotator.evaluation import views as evaluation_views
from annotator.media import lifelog_views, video_pages
from annotator.media import views as media_views
from annotator.qa import export_views as qa_export_views
from annotator.qa import views as qa_views
from annotator.studies import dashboard as study_dashboard
from annotator.studies import link_views as study_link_views
from annotator.studies import views as study_views

register_converter(IdConverter, "id")
register_converter(UnitHandleConverter, "unit")  # a unit's handle: what an annotator's page names it by (issue 20)
handler400 = "api.exceptions.bad_request"
handler403 = "api.exceptions.permission_denied"
handler404 = "api.exceptions.not_found"
handler500 = "api.exceptions.server_error"

urlpatterns = [
    path("", include("annotator.console.urls")),  # home, units, my work (issue 20)
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("admin/", admin.site.urls),
    # Health (annotator/health.py): JSON with ?format=json or Accept: application/json; 500 on any failure.
    path("health/", HealthCheckView.as_view(checks=health.ALL), name="health"),
    path("health/web/", HealthCheckView.as_view(checks=health.WEB), name="health-web"),
    path("api/", include("api.urls")),
    path("projects/<slug:slug>/verify/", qa_views.verify, name="verify"),
    path("projects/<slug:slug>/videos/", video_pages.video_list, name="video-list"),
    path("projects/<slug:slug>/videos/<id:pk>/retry/", video_pages.video_retry, name="video-retry"),
    path("projects/<slug:slug>/lifelogs/", lifelog_views.lifelog_list, name="lifelog-list"),
    path("projects/<slug:slug>/lifelogs/<id:pk>/", lifelog_views.lifelog_detail, name="lifelog-detail"),
    path("projects/<slug:slug>/export.jsonl", qa_views.export_download, name="export-download"),
    path("projects/<slug:slug>/export/", qa_export_views.export_page, name="export-page"),
    path("projects/<slug:slug>/exports/<id:pk>/download/", qa_export_views.export_file, name="export-file"),
    path("projects/<slug:slug>/progress/", qa_views.progress, name="progress"),
    path("projects/<slug:slug>/qa-types/", qa_views.qa_types, name="qa-types"),
    path("projects/<slug:slug>/qa/", qa_views.qa_list, name="qa-list"),
    path("projects/<slug:slug>/qa/<id:pk>/", qa_views.qa_detail, name="qa-detail"),
    path("projects/<slug:slug>/units/<id:pk>/", qa_views.unit_detail, name="unit-detail"),
    path("projects/<slug:slug>/studies/<slug:name>/", study_views.take, name="study-take"),
    path("projects/<slug:slug>/studies/<slug:name>/preview/", study_views.preview, name="study-preview"),
    path(
        "projects/<slug:slug>/studies/<slug:name>/instructions/",
        study_views.edit_instructions,
        name="study-instructions",
    ),
    path("projects/<slug:slug>/studies/<slug:name>/results/", study_dashboard.results, name="study-results"),
    path(
        "projects/<slug:slug>/studies/<slug:name>/trials.<str:fmt>", study_dashboard.export_trials, name="study-trials"
    ),
    path("projects/<slug:slug>/studies/<slug:name>/scores.csv", study_dashboard.export_scores, name="study-scores"),
    path("projects/<slug:slug>/agreement/", agreement_views.agreement_dashboard, name="agreement-dashboard"),
    path("projects/<slug:slug>/agreement/consensus/", agreement_views.consensus_list, name="agreement-consensus"),
    path(
        "projects/<slug:slug>/agreement/consensus/<id:pk>/",
        agreement_views.consensus_item,
        name="agreement-consensus-item",
    ),
    path("projects/<slug:slug>/runs/", include("annotator.drafts.urls")),
    path("projects/<slug:slug>/report/", include("annotator.reports.urls")),
    path("projects/<slug:slug>/evaluation/", evaluation_views.leaderboard, name="evaluation-leaderboard"),
    path("projects/<slug:slug>/evaluation/<id:pk>/", evaluation_views.detail, name="evaluation-detail"),
    path("projects/<slug:slug>/evaluation/<id:pk>/rejudge/", evaluation_views.rejudge_page, name="evaluation-rejudge"),
    path("projects/<slug:slug>/ordering/<slug:name>/", study_views.ordering_alias),
    path("projects/<slug:slug>/ordering/<slug:name>/<path:rest>", study_views.ordering_alias),
    # Study links (issue 19): anonymous panel participants, no account.
    path("s/<str:token>/", study_link_views.entry, name="study-link"),
    path("s/<str:token>/consent/", study_link_views.consent, name="study-link-consent"),
    path("s/<str:token>/screening/", study_link_views.screening, name="study-link-screening"),
    path("s/<str:token>/done/", study_link_views.done, name="study-link-done"),
    path("s/<str:token>/test-clip.mp4", study_link_views.test_clip, name="study-link-test-clip"),
    # Stored media go through this access-checked view (never a bare MEDIA_URL), with byte ranges.
    path("files/<path:name>", media_views.serve_media, name="media"),
    # Issue 20: each app lists its own pages.
    path("", include("annotator.team.urls")),
    path("", include("annotator.gold.urls")),
    path("", include("annotator.review.urls")),
]
