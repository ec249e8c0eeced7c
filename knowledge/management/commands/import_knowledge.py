from incidents.management.base import ImportCommand
from knowledge.services import knowledge_import_file


class Command(ImportCommand):
    help = (
        "Import knowledge documents from JSON Lines (the fields of "
        "shared/eval/knowledge.jsonl) or a folder of markdown files with front matter "
        "(title, type, services, tags) into a dataset version."
    )
    import_function = staticmethod(knowledge_import_file)
    default_dataset = "knowledge"
