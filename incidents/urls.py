"""Incident pages."""

from django.urls import path

from incidents import views

urlpatterns = [
    path("", views.incident_list, name="incident-list"),
    path("<str:incident_id>/", views.incident_detail, name="incident-detail"),
]
