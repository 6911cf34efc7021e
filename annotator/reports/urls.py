from django.urls import path

from annotator.reports import views

urlpatterns = [
    path("", views.report_page, name="report"),
    path("report.<str:fmt>", views.report_download, name="report-download"),
]
