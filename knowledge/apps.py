from django.apps import AppConfig


class KnowledgeConfig(AppConfig):
    name = "knowledge"
    verbose_name = "Knowledge"

    def ready(self) -> None:
        """Let the import engine (and the upload jobs) import knowledge datasets.

        Registered here so that incidents, which runs every import, never imports knowledge.
        """
        from incidents.importing import IMPORT_SPECS  # apps load before their models
        from incidents.models import Dataset
        from knowledge.services import KNOWLEDGE_SPEC

        IMPORT_SPECS[Dataset.Kind.KNOWLEDGE] = KNOWLEDGE_SPEC
