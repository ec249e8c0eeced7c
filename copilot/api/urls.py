"""Conversation, golden-example and chat endpoints under /api/."""

from django.urls import path

from copilot.api import views
from incidentdesk.api.routing import operations

urlpatterns = [
    path("conversations/", views.ConversationListApi.as_view(), name="conversations"),
    path(
        "conversations/<int:conversation_id>/",
        operations(
            get=views.ConversationDetailApi,
            patch=views.ConversationRenameApi,
            delete=views.ConversationDeleteApi,
        ),
        name="conversation",
    ),
    path(
        "conversations/<int:conversation_id>/restore/",
        views.ConversationRestoreApi.as_view(),
        name="conversation-restore",
    ),
    path(
        "conversations/<int:conversation_id>/cancel/",
        views.ConversationCancelApi.as_view(),
        name="conversation-cancel",
    ),
    path(
        "messages/<int:message_id>/feedback/",
        views.MessageFeedbackApi.as_view(),
        name="message-feedback",
    ),
    path(
        "golden-examples/",
        operations(get=views.GoldenExampleListApi, post=views.GoldenExampleCreateApi),
        name="golden-examples",
    ),
    path(
        "golden-examples/<int:example_id>/",
        operations(
            get=views.GoldenExampleDetailApi,
            patch=views.GoldenExampleUpdateApi,
            delete=views.GoldenExampleDeleteApi,
        ),
        name="golden-example",
    ),
    path("chat/", views.ChatApi.as_view(), name="chat"),
]
