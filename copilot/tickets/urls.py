"""Ticket pages (built-in tracker and Jira mirrors alike)."""

from django.urls import path

from copilot.tickets import views

urlpatterns = [
    path("", views.ticket_list, name="ticket-list"),
    path("<str:key>/", views.ticket_detail, name="ticket-detail"),
    path("<str:key>/status/", views.ticket_status, name="ticket-status"),
    path("<str:key>/screenshot/", views.ticket_screenshot, name="ticket-screenshot"),
]
