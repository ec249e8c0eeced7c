"""Start (or attach to) the embedded PostgreSQL and Redis before any test.

pytest is then their owner, and stops them when the run ends (unless
`make run` had them running already, in which case it only attaches).
"""

import os

from incidentdesk import embedded

# Tests keep the offline engine unpaced (OFFLINE_STREAM_PACE_MS): the processes they
# start (daphne, manage.py) read it from here, this process through a fixture in
# tests/conftest.py, since pytest-django has read the settings before this file.
os.environ["OFFLINE_STREAM_PACE_MS"] = "0"

embedded.ensure_services()
