"""API of annotator.team (issue 20). Its routes are in ``urlpatterns`` below, included by api/urls.py."""

from django.urls import path  # noqa: F401

urlpatterns: list = []
