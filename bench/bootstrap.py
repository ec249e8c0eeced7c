"""What every benchmark does first: Django on the embedded services.

Import it before anything from the project: `import bootstrap` (the bench
folder is on sys.path when a script in it runs).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parents[1]
EVAL_DIR = Path(os.environ.get("EVAL_DATA_DIR", BASE_DIR.parent / "shared" / "eval"))

sys.path.insert(0, str(BASE_DIR))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "incidentdesk.settings")
# Benches time the work, not the offline engine's pacing for human eyes (up to
# 1.5 s an answer); daphne started by a bench inherits this. Set it to measure it.
os.environ.setdefault("OFFLINE_STREAM_PACE_MS", "0")

from incidentdesk import embedded  # noqa: E402

embedded.ensure_services()

import django  # noqa: E402

django.setup()

from incidentdesk.migrating import SchemaMissingError, schema_ensure  # noqa: E402

# A bench on a fresh checkout: migrate the embedded database, or say what to run.
try:
    schema_ensure(say=lambda line: print(line, file=sys.stderr))
except SchemaMissingError as exc:
    sys.exit(exc.message)
