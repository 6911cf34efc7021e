"""Pages of annotator.team, mounted at the site root by annotator/urls.py (paths written in full)."""

from django.urls import path

from annotator.team import views

urlpatterns: list = [
    path("projects/<slug:slug>/team/", views.team_page, name="team-page"),
    path("projects/<slug:slug>/team/pay.csv", views.pay_csv, name="team-pay-csv"),
]
