"""Pages of annotator.review, mounted at the site root by annotator/urls.py (paths written in full)."""

from django.urls import path

from annotator.review import views

urlpatterns: list = [path("projects/<slug:slug>/review/", views.review_page, name="review-page")]
