"""URL routes: the app pages, accounts (allauth), the admin and the API."""

from django.contrib import admin
from django.urls import include, path

from incidents import views as incident_views

urlpatterns = [
    path("", incident_views.home, name="home"),
    path("accounts/", include("allauth.urls")),
    path("admin/", admin.site.urls),
    path("api/", include("incidentdesk.api.urls")),
]
