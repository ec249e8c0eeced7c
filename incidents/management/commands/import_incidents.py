from incidents.management.base import ImportCommand
from incidents.services import incident_import_file


class Command(ImportCommand):
    help = (
        "Import incidents from JSON Lines, a JSON array or CSV (the fields of "
        "shared/eval/incidents.jsonl) into a dataset version. Bad rows are reported "
        "by line and skipped; re-importing the same file changes nothing."
    )
    import_function = staticmethod(incident_import_file)
    default_dataset = "incidents"
