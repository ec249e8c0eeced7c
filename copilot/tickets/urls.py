"""Ticket pages of the built-in tracker."""

from django.urls import path

from copilot.tickets import views

urlpatterns = [
    path("<str:key>/", views.ticket_detail, name="ticket-detail"),
]
