"""The chat pages; the home page is a new chat."""

from django.urls import path

from copilot import views

urlpatterns = [
    path("", views.chat_home, name="home"),
    path("conversations/new/", views.conversation_create, name="conversation-create"),
    path("conversations/search/", views.conversation_search, name="conversation-search"),
    path(
        "conversations/<int:conversation_id>/",
        views.conversation_detail,
        name="conversation-detail",
    ),
    path(
        "conversations/<int:conversation_id>/rename/",
        views.conversation_rename,
        name="conversation-rename",
    ),
    path(
        "conversations/<int:conversation_id>/delete/",
        views.conversation_delete,
        name="conversation-delete",
    ),
    path(
        "conversations/<int:conversation_id>/restore/",
        views.conversation_restore,
        name="conversation-restore",
    ),
    path(
        "conversations/<int:conversation_id>/stop/",
        views.conversation_cancel,
        name="conversation-cancel",
    ),
    path("messages/<int:message_id>/answer/", views.message_answer, name="message-answer"),
    path("messages/<int:message_id>/feedback/", views.message_feedback, name="message-feedback"),
]
