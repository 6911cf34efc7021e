"""Pages of annotator.gold, mounted at the site root by annotator/urls.py (paths written in full)."""

from django.urls import path  # noqa: F401

urlpatterns: list = []
