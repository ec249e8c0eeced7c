"""Websocket routes. The chat consumer arrives with the web app issue."""

from django.urls import URLPattern

websocket_urlpatterns: list[URLPattern] = []
