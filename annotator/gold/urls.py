"""Pages of annotator.gold, mounted at the site root by annotator/urls.py (paths written in full)."""

from django.urls import path

from annotator.gold import views

urlpatterns: list = [
    path("projects/<slug:slug>/tutorial/", views.tutorial, name="gold-tutorial"),
    path("projects/<slug:slug>/gold/", views.gold_admin, name="gold-admin"),
]
