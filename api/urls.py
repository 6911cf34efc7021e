from django.urls import path
from drf_spectacular.views import SpectacularAPIView

from api import views

urlpatterns = [
    path("schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("projects/<slug:slug>/queue/next/", views.QueueNextView.as_view(), name="api-queue-next"),
    path("projects/<slug:slug>/videos/", views.VideoListView.as_view(), name="api-videos"),
    path("projects/<slug:slug>/export/", views.ExportView.as_view(), name="api-export"),
    path("units/<int:pk>/submit/", views.UnitSubmitView.as_view(), name="api-unit-submit"),
]
