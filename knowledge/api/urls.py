"""Knowledge endpoints under /api/."""

from django.urls import path

from knowledge.api import views

urlpatterns = [
    path(
        "knowledge/documents/",
        views.KnowledgeDocumentListApi.as_view(),
        name="knowledge-documents",
    ),
    path(
        "knowledge/documents/<str:doc_id>/",
        views.KnowledgeDocumentDetailApi.as_view(),
        name="knowledge-document",
    ),
    path("knowledge/search/", views.KnowledgeSearchApi.as_view(), name="knowledge-search"),
]
