"""Incident pages."""

from django.urls import path

from incidents import views

urlpatterns = [
    path("", views.incident_list, name="incident-list"),
    path("review/", views.incident_review_list, name="incident-review"),
    path("review/<int:pk>/", views.incident_review_action, name="incident-review-action"),
    path("<str:incident_id>/", views.incident_detail, name="incident-detail"),
]
