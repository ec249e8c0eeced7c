"""Knowledge pages."""

from django.urls import path

from knowledge import views

urlpatterns = [
    path("", views.knowledge_list, name="knowledge-list"),
    path("<str:doc_id>/", views.knowledge_detail, name="knowledge-detail"),
    path(
        "<str:doc_id>/validate/",
        views.knowledge_mark_validated,
        name="knowledge-mark-validated",
    ),
]
