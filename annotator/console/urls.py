"""The console's pages (full paths, included at the site root)."""

from django.urls import path

from annotator.console import views

urlpatterns = [
    path("", views.home, name="home"),
    path("projects/<slug:slug>/units/", views.unit_list, name="unit-list"),
    path("projects/<slug:slug>/units/action/", views.unit_action, name="unit-action"),
    path("projects/<slug:slug>/my-work/", views.my_work, name="my-work"),
    path("projects/<slug:slug>/my-work/reopen/", views.my_work_reopen, name="my-work-reopen"),
]
