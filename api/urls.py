from django.urls import path
from drf_spectacular.views import SpectacularAPIView

from api import agreement, runs, studies, views

urlpatterns = [
    path("schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("projects/<slug:slug>/queue/next/", views.QueueNextView.as_view(), name="api-queue-next"),
    path("projects/<slug:slug>/videos/", views.VideoListView.as_view(), name="api-videos"),
    path("projects/<slug:slug>/export/", views.ExportView.as_view(), name="api-export"),
    path("projects/<slug:slug>/qa-types/", views.QATypeListView.as_view(), name="api-qa-types"),
    path("projects/<slug:slug>/policy/", views.PolicyView.as_view(), name="api-policy"),
    path("projects/<slug:slug>/progress/", views.ProgressView.as_view(), name="api-progress"),
    path("units/<id:pk>/submit/", views.UnitSubmitView.as_view(), name="api-unit-submit"),
    path("units/<id:pk>/heartbeat/", views.UnitHeartbeatView.as_view(), name="api-unit-heartbeat"),
    path("units/<id:pk>/skip/", views.UnitSkipView.as_view(), name="api-unit-skip"),
    path("units/<id:pk>/autosave/", views.UnitAutosaveView.as_view(), name="api-unit-autosave"),
    path("qa/<id:pk>/", views.QAPairView.as_view(), name="api-qa"),
    path("qa/<id:pk>/flag/", views.QAFlagView.as_view(), name="api-qa-flag"),
    path("projects/<slug:slug>/studies/", studies.StudyListView.as_view(), name="api-studies"),
    path("studies/<id:pk>/items/", studies.StudyItemsView.as_view(), name="api-study-items"),
    path("studies/<id:pk>/results/", studies.StudyResultsView.as_view(), name="api-study-results"),
    path("studies/<id:pk>/trials/", studies.StudyTrialsView.as_view(), name="api-study-trials"),
    path("studies/<id:pk>/enroll/", studies.EnrollView.as_view(), name="api-study-enroll"),
    path("studies/<id:pk>/current/", studies.CurrentView.as_view(), name="api-study-current"),
    path("trials/<id:pk>/shown/", studies.ShownView.as_view(), name="api-trial-shown"),
    path("trials/<id:pk>/answer/", studies.AnswerView.as_view(), name="api-trial-answer"),
    path("projects/<slug:slug>/agreement/", agreement.AgreementView.as_view(), name="api-agreement"),
    path("projects/<slug:slug>/agreement/compute/", agreement.ComputeView.as_view(), name="api-agreement-compute"),
    path("projects/<slug:slug>/agreement/ratings/", agreement.RatingsView.as_view(), name="api-agreement-ratings"),
    path("projects/<slug:slug>/agreement/consensus/", agreement.ConsensusListView.as_view(), name="api-consensus"),
    path("agreement/consensus/<id:pk>/", agreement.ConsensusRecordView.as_view(), name="api-consensus-record"),
    path("projects/<slug:slug>/runs/", runs.RunListView.as_view(), name="api-runs"),
    path("projects/<slug:slug>/model-servers/", runs.ModelServerListView.as_view(), name="api-model-servers"),
    path("runs/<id:pk>/", runs.RunView.as_view(), name="api-run"),
    path("runs/<id:pk>/cancel/", runs.RunCancelView.as_view(), name="api-run-cancel"),
    path("runs/<id:pk>/resume/", runs.RunResumeView.as_view(), name="api-run-resume"),
]
