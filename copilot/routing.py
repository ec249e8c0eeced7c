"""Websocket routes."""

from django.urls import URLPattern, path

from copilot.consumers import ChatConsumer

websocket_urlpatterns: list[URLPattern] = [
    path("ws/conversations/<int:conversation_id>/", ChatConsumer.as_asgi()),
]
