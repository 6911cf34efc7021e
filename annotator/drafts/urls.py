"""Pages of pipeline runs, under /projects/<slug>/runs/ (``annotator.drafts.views``)."""

from django.urls import path

from annotator.drafts import views

urlpatterns = [path("", views.run_list, name="draft-runs"), path("<id:pk>/", views.run_detail, name="draft-run")]
