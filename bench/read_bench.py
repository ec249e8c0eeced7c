#!/usr/bin/env python
"""How long reading an import file takes, JSON array against JSON Lines, at two sizes.

Only `incidents.importers.read_rows` (parsing and line numbers; no database,
no embedding). Reading twice the rows should take about twice as long: the
JSON array reader used to count lines from the top of the file for every row
(quadratic: 309 s for 50 MB, issue 17). Usage: python bench/read_bench.py [--mb N]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # no Django needed

from incidents.importers import read_rows

ROW = {
    "incident_id": "INC-2025-01-01-001",
    "title": "Checkout errors after the deploy",
    "impacted_application": "Checkout Gateway",
    "root_cause": "A connection pool was exhausted. " * 8,
    "mitigation": "Raised the pool size and restarted the pods. " * 4,
    "tags": ["database", "checkout"],
}


def write_files(folder: Path, megabytes: float) -> tuple[Path, Path, int]:
    """The same rows as a pretty-printed JSON array and as JSON Lines."""
    element = json.dumps(ROW, indent=2)
    count = max(1, int(megabytes * 1024 * 1024 / len(element)))
    array = folder / f"rows-{megabytes}.json"
    array.write_text("[\n" + ",\n".join([element] * count) + "\n]\n")
    lines = folder / f"rows-{megabytes}.jsonl"
    lines.write_text((json.dumps(ROW) + "\n") * count)
    return array, lines, count


def seconds_to_read(path: Path) -> float:
    started = time.perf_counter()
    for _ in read_rows(path):
        pass
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=10, help="size of the larger file")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        for megabytes in (args.mb / 2, args.mb):
            array, lines, count = write_files(Path(folder), megabytes)
            print(
                f"{megabytes:6.1f} MB, {count} rows: JSON array {seconds_to_read(array):6.2f} s, "
                f"JSON Lines {seconds_to_read(lines):6.2f} s"
            )


if __name__ == "__main__":
    main()
