"""Start (or attach to) the embedded PostgreSQL and Redis before any test.

pytest is then their owner, and stops them when the run ends (unless
`make run` had them running already, in which case it only attaches).
"""

from incidentdesk import embedded

embedded.ensure_services()
